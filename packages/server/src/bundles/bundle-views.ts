import type { BundleDetail, Staging } from '@svc/contract';
import type { Selectable } from 'kysely';
import type { BundleStagingsTable, BundlesTable, BundleVersionsTable } from '../db/schema.js';

/** The public address of a bundle (latest version) or of one of its versions. */
export const bundleUrl = (publicUrl: string, accountSlug: string, name: string, version?: number) =>
  `${publicUrl}/${accountSlug}/${name}${version === undefined ? '' : `/versions/${version}`}`;

export const toStaging = (row: Selectable<BundleStagingsTable>): Staging => ({
  id: row.id,
  agentId: row.agentId,
  state: row.state,
  manifest: row.manifest,
  report: row.report,
  bundleId: row.bundleId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const toVersion = (row: Selectable<BundleVersionsTable>) => ({
  version: row.version,
  fileCount: row.fileCount,
  totalBytes: Number(row.totalBytes),
  tarball: { size: Number(row.tarballSize), sha256: row.tarballSha256 },
  createdAt: row.createdAt.toISOString(),
});

export const toBundleDetail = (
  publicUrl: string,
  bundle: Selectable<BundlesTable> & { accountSlug: string },
  versions: readonly Selectable<BundleVersionsTable>[],
): BundleDetail => ({
  id: bundle.id,
  accountSlug: bundle.accountSlug,
  name: bundle.name,
  displayName: bundle.displayName,
  description: bundle.description,
  tags: bundle.tags,
  credentials: bundle.credentials,
  latestVersion: versions[0]?.version ?? null,
  url: bundleUrl(publicUrl, bundle.accountSlug, bundle.name),
  versions: versions.map(toVersion),
});
