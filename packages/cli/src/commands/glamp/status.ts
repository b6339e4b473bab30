import { getGlampStatus } from '@svc/contract';
import { agentApiClient } from '../../api-client.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp status`. */
export const glampStatusCommand: CliCommand = {
  register(glamp, io) {
    glamp
      .command('status')
      .description("Show the open staging or this account's published bundles")
      .action(() => glampStatus(io));
  },
};

/** The open staging, or the account's published bundles. */
async function glampStatus(io: CliIo): Promise<void> {
  const status = await (await agentApiClient(io))(getGlampStatus);
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
