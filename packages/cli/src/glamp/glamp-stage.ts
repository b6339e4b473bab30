import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  createStaging,
  getGlampStatus,
  MANIFEST_FILE,
  STAGING_DIR,
  type StagingReport,
} from '@svc/contract';
import type { CliIo } from '../main.js';
import type { ApiClient } from './api.js';
import { readManifest, writeManifest } from './manifest-file.js';
import { formatFlags, formatReport } from './report-print.js';
import {
  buildStagingTarball,
  buildStagingTree,
  Describer,
  describeStagingTree,
  extensionBreakdown,
  type StagingDescription,
} from './staging.js';
import { readLocalStaging, writeLocalStaging } from './state.js';

/**
 * `svc glamp stage`: builds the staging tree and its tarball, records the report on the service
 * and prints it. The 500 MB check fails before the service hears of anything.
 */
export async function glampStage(io: CliIo, home: string, api: ApiClient): Promise<void> {
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

/** `svc glamp rescan`: the scan again, on the staging tree as it is now. */
export async function glampRescan(io: CliIo, home: string): Promise<number> {
  const state = await readLocalStaging(home);
  if (!state) throw new Error('nothing is staged: run "svc glamp stage" first');
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

/** `svc glamp status`: the open staging, or the account's published bundles. */
export async function glampStatus(io: CliIo, api: ApiClient): Promise<void> {
  const status = await api(getGlampStatus);
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
