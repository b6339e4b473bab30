import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createStaging, MANIFEST_FILE, STAGING_DIR, type StagingReport } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { agentApiClient } from '../../api-client.js';
import { readManifest, writeManifest } from '../../glamp/manifest-file.js';
import { commandProgress, writeJson } from '../../glamp/progress.js';
import { formatReport } from '../../glamp/report-print.js';
import {
  buildStagingTarball,
  buildStagingTree,
  Describer,
  extensionBreakdown,
  type StagingDescription,
} from '../../glamp/staging.js';
import { writeLocalStaging } from '../../glamp/state.js';
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
  const tree = await progress.run('scan', (p) => buildStagingTree(home, p));
  const updated = { ...manifest, credentials: tree.credentials };
  // The manifest lists what was stripped; the staged copy must say the same.
  await writeManifest(home, updated);
  await writeManifest(path.join(home, STAGING_DIR), updated);
  // Only the manifest changed since the tree was described: describe it again, alone.
  const described = await redescribe(home, tree, MANIFEST_FILE);
  const tarball = await progress.run('tarball', (p) =>
    buildStagingTarball(home, described.files, p),
  );
  const report: StagingReport = {
    fileCount: described.files.length,
    totalBytes: described.files.reduce((sum, f) => sum + f.size, 0),
    byExtension: extensionBreakdown(described.files),
    flags: described.flags,
    credentials: tree.credentials,
    files: described.files,
    tarball,
  };
  const staging = await progress.wait(
    'Recording the report',
    api(createStaging, { body: { manifest: updated, report } }),
  );
  await writeLocalStaging(home, {
    stagingId: staging.id,
    flagFingerprints: described.flags.map((f) => f.fingerprint),
  });
  const extra = {
    skippedLinks: tree.skippedLinks,
    unscanned: described.unscanned,
    ignoreWarnings: tree.ignoreWarnings,
  };
  if (isJson) {
    writeJson(io, { stagingId: staging.id, ...report, ...extra, steps: progress.steps });
    return;
  }
  io.stdout.write(formatReport({ ...report, ...extra }));
  io.stdout.write(`Staging ${staging.id} recorded. Next: svc glamp confirm (or rescan, cancel)\n`);
}

async function redescribe(home: string, tree: StagingDescription, file: string) {
  const one = new Describer();
  await one.add(file, await readFile(path.join(home, STAGING_DIR, file)));
  const fresh = await one.result();
  return {
    files: [...tree.files.filter((f) => f.path !== file), ...fresh.files].sort((a, b) =>
      Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)),
    ),
    flags: [...tree.flags.filter((f) => f.file !== file), ...fresh.flags],
    unscanned: tree.unscanned,
  };
}
