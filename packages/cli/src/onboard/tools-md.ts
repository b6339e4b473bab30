/** What `svc onboard` knows about this Agent's apps when it writes `TOOLS.md`. */
export interface ToolsInfo {
  readonly providers: readonly {
    provider: string;
    displayName: string;
    envVar: string;
    accountEnvVar: string;
    tool: { name: string; checkCmd: string };
  }[];
  readonly connections: readonly {
    provider: string;
    providerAccountName: string;
    status: string;
  }[];
  /** Why the app list could not be read, if it could not. */
  readonly appsUnavailable?: string;
  /** The bundle this Agent was adopted from, if it was. */
  readonly adoptedFrom?: { bundle: string; version: number } | null;
  /** Credentials the adopted bundle needs that were not given when it was adopted. */
  readonly credentialsToSet?: readonly string[];
}

/** The `~/TOOLS.md` an AI agent reads to learn what this Agent offers. */
export function renderToolsMd(info: ToolsInfo): string {
  const lines = [
    '# Tools on this Agent',
    '',
    '- `svc`: the hosting service CLI (`svc` lists its commands; see the `svc` skill).',
    '- A shell in your home directory, reachable from the dashboard (Open → Terminal), and an editor.',
    '',
    '## Connected apps',
    '',
  ];
  if (info.appsUnavailable) {
    lines.push(
      `Could not read the connected apps (${info.appsUnavailable}); run \`svc onboard\` again later.`,
    );
  } else if (info.connections.length === 0) {
    lines.push('None yet. The user connects apps in the dashboard; then run `svc onboard` again.');
  } else {
    lines.push(
      '| app | account | token variable | account variable | get a token |',
      '|---|---|---|---|---|',
    );
    for (const connection of info.connections) {
      const provider = info.providers.find((p) => p.provider === connection.provider);
      if (!provider) continue;
      const state = connection.status === 'active' ? '' : ' (needs reconnecting)';
      lines.push(
        `| ${provider.displayName}${state} | ${connection.providerAccountName} | \`${provider.envVar}\` | \`${provider.accountEnvVar}\` | \`svc apps ${provider.provider}\` |`,
      );
    }
  }
  lines.push(...credentialLines(info));
  return `${lines.join('\n')}\n`;
}

/** The adopted bundle's credentials still to set, where its software reads them. */
function credentialLines({ adoptedFrom, credentialsToSet = [] }: ToolsInfo): string[] {
  if (!adoptedFrom || credentialsToSet.length === 0) return [];
  return [
    '',
    '## Credentials to set',
    '',
    `This Agent was adopted from ${adoptedFrom.bundle} (version ${adoptedFrom.version}); these credentials were not given then. Add each to \`~/.openclaw/.env\` as \`KEY=value\`:`,
    '',
    ...credentialsToSet.map((key) => `- \`${key}\`: to set`),
  ];
}
