import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createStaging, MANIFEST_FILE, STAGING_DIR, type StagingReport } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { agentApiClient } from '../../api-client.js';
import { readManifest, writeManifest } from '../../glamp/manifest-file.js';
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
      .action(() => glampStage(io));
  },
};

/**
 * Builds the staging tree and its tarball, records the report on the service and prints it.
 * The 500 MB check fails before the service hears of anything.
 */
async function glampStage(io: CliIo): Promise<void> {
  const home = requireHome(io.env);
  const api = await agentApiClient(io);
  const manifest = await readManifest(home);
  const tree = await buildStagingTree(home);
  const updated = { ...manifest, credentials: tree.credentials };
  // The manifest lists what was stripped; the staged copy must say the same.
  await writeManifest(home, updated);
  await writeManifest(path.join(home, STAGING_DIR), updated);
  // Only the manifest changed since the tree was described: describe it again, alone.
  const described = await redescribe(home, tree, MANIFEST_FILE);
  const tarball = await buildStagingTarball(home, described.files);
  const report: StagingReport = {
    fileCount: described.files.length,
    totalBytes: described.files.reduce((sum, f) => sum + f.size, 0),
    byExtension: extensionBreakdown(described.files),
    flags: described.flags,
    credentials: tree.credentials,
    files: described.files,
    tarball,
  };
  const staging = await api(createStaging, { body: { manifest: updated, report } });
  await writeLocalStaging(home, {
    stagingId: staging.id,
    flagFingerprints: described.flags.map((f) => f.fingerprint),
  });
  io.stdout.write(
    formatReport({
      ...report,
      skippedLinks: tree.skippedLinks,
      unscanned: described.unscanned,
      ignoreWarnings: tree.ignoreWarnings,
    }),
  );
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
