import { createStaging, type StagingReport } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { agentApiClient } from '../../api-client.js';
import { readManifest, writeManifest } from '../../glamp/manifest-file.js';
import { commandProgress, writeJson } from '../../glamp/progress.js';
import { formatReport } from '../../glamp/report-print.js';
import { buildStagingTree, extensionBreakdown, finishStagingTarball } from '../../glamp/staging.js';
import { writeLocalStaging } from '../../glamp/state.js';
import type { TarballWriter } from '../../glamp/tarball.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp stage`. */
export const glampStageCommand: CliCommand = {
  register(glamp, io) {
    glamp
      .command('stage')
      .description('Scan, build ~/.crabglamp/glamp-staging/ and its tarball, record the report')
      .option('--json', 'print the report as one JSON document (progress only on a terminal)')
      .action((options: { json?: boolean }) => glampStage(io, options.json === true));
  },
};

/**
 * Builds the staging tree and its tarball, records the report on the service and prints it.
 * The 500 MB check fails before the service hears of anything.
 */
async function glampStage(io: CliIo, isJson: boolean): Promise<void> {
  const home = requireHome(io.env);
  const api = await agentApiClient(io);
  const manifest = await readManifest(home);
  const progress = commandProgress(io, isJson);
  // The tarball is packed while the tree is built; the staged bundle.json lists what was
  // stripped, and the home's copy says the same.
  const tree = await progress.run('scan', (p) =>
    buildStagingTree(home, p, { manifest, tarball: true }),
  );
  const updated = { ...manifest, credentials: tree.credentials };
  await writeManifest(home, updated);
  const tarball = await progress.run('tarball', (p) =>
    finishStagingTarball(tree.tarball as TarballWriter, tree.files, p),
  );
  const report: StagingReport = {
    fileCount: tree.files.length,
    totalBytes: tree.files.reduce((sum, f) => sum + f.size, 0),
    byExtension: extensionBreakdown(tree.files),
    flags: tree.flags,
    credentials: tree.credentials,
    files: tree.files,
    tarball,
  };
  const staging = await progress.wait(
    'Recording the report',
    api(createStaging, { body: { manifest: updated, report } }),
  );
  await writeLocalStaging(home, {
    stagingId: staging.id,
    flagFingerprints: tree.flags.map((f) => f.fingerprint),
  });
  const extra = {
    skippedLinks: tree.skippedLinks,
    unscanned: tree.unscanned,
    ignoreWarnings: tree.ignoreWarnings,
  };
  if (isJson) {
    writeJson(io, { stagingId: staging.id, ...report, ...extra, steps: progress.steps });
    return;
  }
  io.stdout.write(formatReport({ ...report, ...extra }));
  io.stdout.write(`Staging ${staging.id} recorded. Next: svc glamp confirm (or rescan, cancel)\n`);
}
