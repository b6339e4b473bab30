import { requireHome } from '../../agent-env.js';
import { commandProgress, writeJson } from '../../glamp/progress.js';
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
      .option('--json', 'print the flags as one JSON document (progress only on a terminal)')
      .action(async (options: { json?: boolean }) =>
        setExitCode(await glampRescan(io, options.json === true)),
      );
  },
};

/** The scan again, on the staging tree as it is now; 1 when it finds flags `stage` did not. */
async function glampRescan(io: CliIo, isJson: boolean): Promise<number> {
  const home = requireHome(io.env);
  const state = await requireLocalStaging(home);
  const progress = commandProgress(io, isJson);
  const { files, flags } = await progress.run('check', (p) => describeStagingTree(home, p));
  const known = new Set(state.flagFingerprints);
  const fresh = flags.filter((f) => !known.has(f.fingerprint));
  if (isJson) {
    writeJson(io, {
      stagingId: state.stagingId,
      fileCount: files.length,
      totalBytes: files.reduce((sum, f) => sum + f.size, 0),
      flags,
      newFlags: fresh,
      steps: progress.steps,
    });
    return fresh.length ? 1 : 0;
  }
  io.stdout.write(flags.length ? `Flags:\n${formatFlags(flags)}` : 'Flags: none\n');
  if (fresh.length) {
    io.stdout.write(`New since stage (confirm will refuse them):\n${formatFlags(fresh)}`);
    return 1;
  }
  return 0;
}
