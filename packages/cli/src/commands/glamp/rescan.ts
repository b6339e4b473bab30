import { requireHome } from '../../agent-env.js';
import { formatFlags } from '../../glamp/report-print.js';
import { describeStagingTree } from '../../glamp/staging.js';
import { requireLocalStaging } from '../../glamp/state.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp rescan`. */
export const glampRescanCommand: CliCommand = {
  register(glamp, io, setExitCode) {
    glamp
      .command('rescan')
      .description('Scan the staging directory again without rebuilding it')
      .action(async () => setExitCode(await glampRescan(io)));
  },
};

/** The scan again, on the staging tree as it is now; 1 when it finds flags `stage` did not. */
async function glampRescan(io: CliIo): Promise<number> {
  const home = requireHome(io.env);
  const state = await requireLocalStaging(home);
  const { flags } = await describeStagingTree(home);
  const known = new Set(state.flagFingerprints);
  const fresh = flags.filter((f) => !known.has(f.fingerprint));
  io.stdout.write(flags.length ? `Flags:\n${formatFlags(flags)}` : 'Flags: none\n');
  if (fresh.length) {
    io.stdout.write(`New since stage (confirm will refuse them):\n${formatFlags(fresh)}`);
    return 1;
  }
  return 0;
}
