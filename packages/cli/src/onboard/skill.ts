/** The agent skill `svc onboard` installs: how an AI agent on this VM uses `svc`. */
export const SKILL_MD = `---
name: svc
description: Use the svc CLI on this Agent to get access tokens for the user's connected apps (Google, GitHub, Spotify) and to publish this environment as a bundle.
---

# svc on this Agent

\`svc\` talks to the hosting service with this Agent's own credential. It never needs a password.

## Connected apps

The user connects apps in the dashboard; this Agent can then get short-lived access tokens.

- \`svc apps\` lists the providers, whether this service has each configured, and what each covers.
- \`svc apps list\` lists the connections this Agent can use and whether each works right now.
  Add \`--json\` to either to read it as JSON.
- \`svc apps <provider>\` (\`suite\`, \`code\` or \`music\`) writes the access token and account to
  \`~/.crabglamp/apps.env\` (loaded by new shells): \`GOG_ACCESS_TOKEN\`/\`GOG_ACCOUNT\`,
  \`GH_TOKEN\`/\`GH_ACCOUNT\`, \`SPOTIFY_ACCESS_TOKEN\`/\`SPOTIFY_ACCOUNT\`. Run \`source ~/.crabglamp/apps.env\`
  in a shell that was already open.
- \`svc apps refresh <provider>\` gets a fresh token when a call fails with 401.
- If svc says the connection needs attention, ask the user to reconnect the app in the dashboard.
  If it says to retry, wait a minute and run it again.

Never print, log or commit a token.

## Publishing this environment (bundles)

1. \`svc glamp init\` writes \`~/bundle.json\` (name, displayName, description, tags).
2. \`svc glamp stage\` copies the home into a staging directory (\`.bundleignore\` works like
   \`.gitignore\`), replaces credentials with placeholders and reports anything that looks secret.
3. Review the report with the user; fix or ignore flags, then \`svc glamp rescan\`.
4. \`svc glamp confirm\` uploads and publishes a new version and prints its public page. With
   flags left it refuses unless \`--accept-flags\` is given: pass it only when the user agreed
   to publish exactly those flags.
5. \`svc glamp status\` shows the staging or the published bundles; \`svc glamp cancel\` drops a staging.
`;
