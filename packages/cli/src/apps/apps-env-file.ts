import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnvFile } from '../agent-env.js';

/** Where `svc apps <provider>` leaves tokens, relative to the home directory. */
export const APPS_ENV_FILE = '.crabglamp/apps.env';

/** The line the shell profile gets, once: new shells load the tokens. */
export const PROFILE_LINE = '[ -f "$HOME/.crabglamp/apps.env" ] && . "$HOME/.crabglamp/apps.env"';

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

export async function readAppsEnv(home: string): Promise<Record<string, string>> {
  return readFile(path.join(home, APPS_ENV_FILE), 'utf8').then(parseEnvFile, () => ({}));
}

/** Sets variables in `apps.env` (mode 600), keeping the other providers' ones. */
export async function writeAppsEnv(home: string, values: Record<string, string>): Promise<string> {
  const file = path.join(home, APPS_ENV_FILE);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const merged = { ...(await readAppsEnv(home)), ...values };
  const lines = Object.keys(merged)
    .sort()
    .map((key) => `export ${key}=${quote(merged[key] as string)}`);
  const text = `# Written by \`svc apps\`; access tokens of connected apps.\n${lines.join('\n')}\n`;
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600); // an existing file keeps its old mode otherwise
  return file;
}

/** Adds the sourcing line to `~/.bashrc` (and `~/.zshrc` when present), unless it is there. */
export async function ensureProfileLine(home: string): Promise<string[]> {
  const changed: string[] = [];
  for (const name of ['.bashrc', '.zshrc']) {
    const file = path.join(home, name);
    const existing = await readFile(file, 'utf8').catch(() => undefined);
    if (existing === undefined && name !== '.bashrc') continue;
    if (existing?.includes(PROFILE_LINE)) continue;
    const prefix = existing && !existing.endsWith('\n') ? '\n' : '';
    await writeFile(file, `${existing ?? ''}${prefix}${PROFILE_LINE}\n`);
    changed.push(file);
  }
  return changed;
}
