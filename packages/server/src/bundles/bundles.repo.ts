import type { BundleFile, BundleManifest } from '@svc/contract';
import { type Insertable, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { BundleVersionsTable } from '../db/schema.js';

// Bundles, their versions and files; stagings and upload tickets are in `stagings.repo.ts`.

export const findBundleById = (db: Executor, id: string) =>
  db.selectFrom('bundles').selectAll().where('id', '=', id).executeTakeFirst();

export const findBundleByName = (db: Executor, accountId: string, name: string) =>
  db
    .selectFrom('bundles')
    .selectAll()
    .where('accountId', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();

/** A bundle by its public address, with its account's slug. */
export const findBundleByAddress = (db: Executor, accountSlug: string, name: string) =>
  db
    .selectFrom('bundles as b')
    .innerJoin('accounts as a', 'a.id', 'b.accountId')
    .selectAll('b')
    .select('a.slug as accountSlug')
    .where('a.slug', '=', accountSlug)
    .where('b.name', '=', name)
    .executeTakeFirst();

/** The account's bundles, whole rows with the account's slug, by name. */
export const listAccountBundles = (db: Executor, accountId: string) =>
  db
    .selectFrom('bundles as b')
    .innerJoin('accounts as a', 'a.id', 'b.accountId')
    .selectAll('b')
    .select('a.slug as accountSlug')
    .where('b.accountId', '=', accountId)
    .orderBy('b.name')
    .execute();

export const insertBundle = (
  db: Executor,
  row: { id: string; accountId: string; manifest: BundleManifest; at: Date },
) =>
  db
    .insertInto('bundles')
    .values({
      id: row.id,
      accountId: row.accountId,
      name: row.manifest.name,
      displayName: row.manifest.displayName,
      description: row.manifest.description,
      tags: JSON.stringify(row.manifest.tags),
      credentials: JSON.stringify(row.manifest.credentials),
      createdAt: row.at,
      updatedAt: row.at,
    })
    .onConflict((oc) => oc.columns(['accountId', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();

/**
 * Takes the next version number: the row lock serializes concurrent completes, so each gets its
 * own number, in commit order; the public fields follow the newest manifest.
 */
export const takeNextVersion = (
  db: Executor,
  bundleId: string,
  manifest: BundleManifest,
  at: Date,
) =>
  db
    .updateTable('bundles')
    .set((eb) => ({
      lastVersion: eb('lastVersion', '+', 1),
      displayName: manifest.displayName,
      description: manifest.description,
      tags: JSON.stringify(manifest.tags),
      credentials: JSON.stringify(manifest.credentials),
      updatedAt: at,
    }))
    .where('id', '=', bundleId)
    .returning(['lastVersion', 'accountId'])
    .executeTakeFirst();

export const deleteBundle = (db: Executor, id: string) =>
  db.deleteFrom('bundles').where('id', '=', id).execute();

/** Bundles of an account that have at least one version, with the newest. */
export const listPublishedBundles = (db: Executor, accountId: string) =>
  db
    .selectFrom('bundles as b')
    .innerJoin('accounts as a', 'a.id', 'b.accountId')
    .innerJoin('bundleVersions as v', 'v.bundleId', 'b.id')
    .select(['b.id', 'b.name', 'b.displayName', 'a.slug as accountSlug'])
    .select((eb) => eb.fn.max('v.version').as('latestVersion'))
    .where('b.accountId', '=', accountId)
    .groupBy(['b.id', 'b.name', 'b.displayName', 'a.slug'])
    .orderBy('b.name')
    .execute();

export const insertVersion = async (
  db: Executor,
  version: Insertable<BundleVersionsTable>,
  files: readonly BundleFile[],
) => {
  await db.insertInto('bundleVersions').values(version).execute();
  // Chunks keep each statement well under PostgreSQL's 65,535 parameters.
  for (let i = 0; i < files.length; i += 5000) {
    await db
      .insertInto('bundleFiles')
      .values(files.slice(i, i + 5000).map((f) => ({ versionId: version.id, ...f })))
      .execute();
  }
};

export const findVersion = (db: Executor, id: string) =>
  db.selectFrom('bundleVersions').selectAll().where('id', '=', id).executeTakeFirst();

export const listVersions = (db: Executor, bundleId: string) =>
  db
    .selectFrom('bundleVersions')
    .selectAll()
    .where('bundleId', '=', bundleId)
    .orderBy('version', 'desc')
    .execute();

/** The versions of several bundles at once, newest first within each. */
export const listVersionsOf = (db: Executor, bundleIds: readonly string[]) =>
  bundleIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('bundleVersions')
        .selectAll()
        .where('bundleId', 'in', bundleIds)
        .orderBy('version', 'desc')
        .execute();

export const listFiles = (db: Executor, versionId: string) =>
  db
    .selectFrom('bundleFiles')
    .select(['path', 'sha256', 'size'])
    .where('versionId', '=', versionId)
    .orderBy(sql`path collate "C"`)
    .execute();

export const findFile = (db: Executor, versionId: string, path: string) =>
  db
    .selectFrom('bundleFiles')
    .select(['path', 'sha256', 'size'])
    .where('versionId', '=', versionId)
    .where('path', '=', path)
    .executeTakeFirst();

/** Every object a set of versions uses: their files and their tarballs. */
export const objectsOfVersions = async (db: Executor, versionIds: readonly string[]) => {
  if (versionIds.length === 0) return [];
  const files = await db
    .selectFrom('bundleFiles')
    .select('sha256')
    .distinct()
    .where('versionId', 'in', versionIds)
    .execute();
  const tarballs = await db
    .selectFrom('bundleVersions')
    .select('tarballSha256 as sha256')
    .where('id', 'in', versionIds)
    .execute();
  return [...new Set([...files, ...tarballs].map((r) => r.sha256))];
};

/** Of these objects, the ones some version still uses. */
export const objectsInUse = async (db: Executor, shas: readonly string[]) => {
  if (shas.length === 0) return new Set<string>();
  const files = await db
    .selectFrom('bundleFiles')
    .select('sha256')
    .distinct()
    .where('sha256', 'in', shas)
    .execute();
  const tarballs = await db
    .selectFrom('bundleVersions')
    .select('tarballSha256 as sha256')
    .where('tarballSha256', 'in', shas)
    .execute();
  return new Set([...files, ...tarballs].map((r) => r.sha256));
};

export const deleteVersion = (db: Executor, id: string) =>
  db.deleteFrom('bundleVersions').where('id', '=', id).execute();

export const findBundleAddress = (db: Executor, bundleId: string) =>
  db
    .selectFrom('bundles as b')
    .innerJoin('accounts as a', 'a.id', 'b.accountId')
    .select(['a.slug as accountSlug', 'b.name'])
    .where('b.id', '=', bundleId)
    .executeTakeFirstOrThrow();

/** One more adoption of the bundle this version belongs to. */
export const countAdoption = (db: Executor, versionId: string) =>
  db
    .updateTable('bundles')
    .set({ adoptionCount: sql`adoption_count + 1` })
    .where('id', '=', (eb) =>
      eb.selectFrom('bundleVersions').select('bundleId').where('id', '=', versionId),
    )
    .execute();
