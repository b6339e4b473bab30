import { getGlampStatus } from '@svc/contract';
import { agentApiClient } from '../../api-client.js';
import { writeJson } from '../../glamp/progress.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp status`. */
export const glampStatusCommand: CliCommand = {
  register(glamp, io) {
    glamp
      .command('status')
      .description("Show the open staging or this account's published bundles")
      .option('--json', "print the service's answer as one JSON document")
      .action((options: { json?: boolean }) => glampStatus(io, options.json === true));
  },
};

/** The open staging, or the account's published bundles. */
async function glampStatus(io: CliIo, isJson: boolean): Promise<void> {
  const status = await (await agentApiClient(io))(getGlampStatus);
  if (isJson) {
    writeJson(io, status);
    return;
  }
  if (status.staging) {
    const s = status.staging;
    io.stdout.write(
      `Open staging ${s.id} (${s.state}): ${s.manifest.name}, ${s.report.fileCount} files, ${s.report.flags.length} flags\n`,
    );
  } else io.stdout.write('No open staging.\n');
  if (status.bundles.length === 0) io.stdout.write('No published bundles.\n');
  for (const b of status.bundles) {
    io.stdout.write(`${b.accountSlug}/${b.name}  version ${b.latestVersion}  ${b.url}\n`);
  }
}
