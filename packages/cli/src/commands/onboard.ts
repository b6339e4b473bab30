import { getSelfAgent, listAppConnections, listAppProviders } from '@svc/contract';
import { loadAgentCredentials } from '../agent-env.js';
import { createApiClient } from '../api-client.js';
import type { CliIo } from '../main.js';
import { ManagedFiles } from '../onboard/managed-file.js';
import { SKILL_MD } from '../onboard/skill.js';
import { renderToolsMd, type ToolsInfo } from '../onboard/tools-md.js';
import type { CliCommand } from './index.js';

export const SKILL_PATH = '.openclaw/skills/svc/SKILL.md';
export const TOOLS_PATH = 'TOOLS.md';

/** `svc onboard`: installs the svc skill and seeds TOOLS.md; run it again any time. */
export const onboardCommand: CliCommand = {
  register(program, io, setExitCode) {
    program
      .command('onboard')
      .description("Install the svc agent skill and seed ~/TOOLS.md (keeps the user's edits)")
      .option('--force', 'replace files the user has edited, without asking')
      .action(async (options: { force?: boolean }) => {
        setExitCode(await onboard(io, options.force === true));
      });
  },
};

async function onboard(io: CliIo, force: boolean): Promise<number> {
  const home = io.env.HOME;
  if (!home) {
    io.stderr.write('svc onboard: HOME is not set\n');
    return 1;
  }
  const files = new ManagedFiles(home);
  await files.load();
  const confirm = async (relative: string) =>
    force ||
    ((await io.prompt?.(`~/${relative} has your edits. Replace it? [y/N] `)) ?? '')
      .trim()
      .toLowerCase() === 'y';
  const results: [string, string][] = [];
  results.push([SKILL_PATH, await files.write(SKILL_PATH, SKILL_MD, confirm)]);
  results.push([
    TOOLS_PATH,
    await files.write(TOOLS_PATH, renderToolsMd(await toolsInfo(io)), confirm),
  ]);
  await files.save();
  for (const [relative, outcome] of results) {
    const note = outcome === 'kept' ? ' (your edits; `svc onboard --force` replaces it)' : '';
    io.stdout.write(`~/${relative}: ${outcome}${note}\n`);
  }
  return 0;
}

/** The providers, this Agent's connections and credentials to set, when the service answers. */
async function toolsInfo(io: CliIo): Promise<ToolsInfo> {
  const credentials = await loadAgentCredentials(io.env);
  if (!credentials)
    return { providers: [], connections: [], appsUnavailable: 'no service credentials' };
  const api = createApiClient(credentials, io.fetch);
  try {
    const [providers, connections, self] = await Promise.all([
      api(listAppProviders),
      api(listAppConnections),
      api(getSelfAgent),
    ]);
    return {
      providers,
      connections,
      adoptedFrom: self.adoptedFrom,
      credentialsToSet: self.credentialsToSet,
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { providers: [], connections: [], appsUnavailable: reason };
  }
}
