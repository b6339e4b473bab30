import type { BundleManifest, StagingReport } from '@svc/contract';
import type { Insertable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { BundleUploadsTable, PublishDeclaration } from '../db/schema.js';

// Stagings (what an Agent declared, before it is a version) and the upload tickets of their
// publish; bundles, versions and files are in `bundles.repo.ts`.

const OPEN_STATES = ['staged', 'publishing'] as const;

/**
 * Locks the Agent's row for the transaction, so its stages take turns: each then sees the one
 * before it committed and replaces it, where two at once would both insert an open staging and
 * the second would break the one-open-staging index (`bundle_stagings_open_idx`). `no key
 * update` leaves rows that merely reference the Agent free to be written meanwhile.
 */
export const lockAgentStagings = (db: Executor, agentId: string) =>
  db.selectFrom('agents').select('id').where('id', '=', agentId).forNoKeyUpdate().execute();

export const cancelOpenStagings = (db: Executor, agentId: string, at: Date) =>
  db
    .updateTable('bundleStagings')
    .set({ state: 'cancelled', updatedAt: at })
    .where('agentId', '=', agentId)
    .where('state', 'in', OPEN_STATES)
    .execute();

export const insertStaging = (
  db: Executor,
  row: {
    id: string;
    agentId: string;
    accountId: string;
    manifest: BundleManifest;
    report: StagingReport;
    at: Date;
  },
) =>
  db
    .insertInto('bundleStagings')
    .values({
      id: row.id,
      agentId: row.agentId,
      accountId: row.accountId,
      state: 'staged',
      manifest: JSON.stringify(row.manifest),
      report: JSON.stringify(row.report),
      createdAt: row.at,
      updatedAt: row.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

/** The Agent's staging (locked with `lock`); another Agent's is `undefined`. */
export const findStaging = (db: Executor, id: string, agentId: string, lock = false) => {
  const query = db
    .selectFrom('bundleStagings')
    .selectAll()
    .where('id', '=', id)
    .where('agentId', '=', agentId);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
};

export const findOpenStaging = (db: Executor, agentId: string) =>
  db
    .selectFrom('bundleStagings')
    .selectAll()
    .where('agentId', '=', agentId)
    .where('state', 'in', OPEN_STATES)
    .executeTakeFirst();

/** Guarded move: only from one of `from`; `undefined` when the staging was elsewhere. */
export const moveStaging = (
  db: Executor,
  id: string,
  from: readonly ('staged' | 'publishing')[],
  set: {
    state: 'publishing' | 'published' | 'cancelled';
    at: Date;
    bundleId?: string;
    publish?: PublishDeclaration;
  },
) =>
  db
    .updateTable('bundleStagings')
    .set({
      state: set.state,
      updatedAt: set.at,
      ...(set.bundleId && { bundleId: set.bundleId }),
      ...(set.publish && { publish: JSON.stringify(set.publish) }),
    })
    .where('id', '=', id)
    .where('state', 'in', from)
    .returningAll()
    .executeTakeFirst();

export const replaceUploads = async (
  db: Executor,
  stagingId: string,
  uploads: Insertable<BundleUploadsTable>[],
) => {
  await db.deleteFrom('bundleUploads').where('stagingId', '=', stagingId).execute();
  if (uploads.length > 0) await db.insertInto('bundleUploads').values(uploads).execute();
};

export const listUploads = (db: Executor, stagingId: string) =>
  db.selectFrom('bundleUploads').selectAll().where('stagingId', '=', stagingId).execute();

export const listExpiredUploads = (db: Executor, before: Date) =>
  db
    .selectFrom('bundleUploads')
    .select(['id', 'sha256'])
    .where('expiresAt', '<', before)
    .limit(10_000)
    .execute();

export const deleteUploads = (db: Executor, ids: readonly string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.deleteFrom('bundleUploads').where('id', 'in', ids).execute();

/** Of these objects, the ones an upload ticket still in force expects. */
export const objectsOfLiveUploads = async (db: Executor, shas: readonly string[]) => {
  if (shas.length === 0) return new Set<string>();
  const rows = await db
    .selectFrom('bundleUploads')
    .select('sha256')
    .distinct()
    .where('sha256', 'in', shas)
    .execute();
  return new Set(rows.map((r) => r.sha256));
};

/**
 * Of these objects, the ones a publish under way declared (a staging in `publishing`): its
 * `complete` may have checked one already and will make a version of it, so it must stay. Few
 * stagings publish at once, so their declarations are read whole and matched here.
 */
export const objectsOfPublishing = async (db: Executor, shas: readonly string[]) => {
  const wanted = new Set(shas);
  const found = new Set<string>();
  if (wanted.size === 0) return found;
  const rows = await db
    .selectFrom('bundleStagings')
    .select('publish')
    .where('state', '=', 'publishing')
    .execute();
  for (const { publish } of rows) {
    for (const object of [...(publish?.files ?? []), ...(publish ? [publish.tarball] : [])]) {
      if (wanted.has(object.sha256)) found.add(object.sha256);
    }
  }
  return found;
};
