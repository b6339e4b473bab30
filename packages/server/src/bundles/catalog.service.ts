import type { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { BundleDetail } from '@svc/contract';
import { SLUG_PATTERN } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Loggers } from '../logger.js';
import { toBundleDetail } from './bundle-views.js';
import * as repo from './bundles.repo.js';
import { objectsStillNeeded } from './objects-needed.js';
import { refreshPublished } from './search.repo.js';

/** READMEs beyond this are shown as a file, not rendered. */
const MAX_README_BYTES = 1024 * 1024;

/**
 * The public side of bundles (what the pages and `GET /api/glamps/{accountSlug}/{name}` show)
 * and deletion by an account's owners and admins. A bundle without versions does not exist here.
 */
export function createCatalogService(deps: {
  database: Database;
  clock: Clock;
  store: ObjectStore;
  membership: Membership;
  publicUrl: string;
  log: Loggers['root'];
}) {
  const { database, store, membership, publicUrl } = deps;
  const db = database.db;

  async function findPublished(accountSlug: string, name: string) {
    if (!SLUG_PATTERN.test(accountSlug)) throw new AppError('not_found');
    const bundle = await repo.findBundleByAddress(db, accountSlug, name);
    if (!bundle) throw new AppError('not_found');
    const versions = await repo.listVersions(db, bundle.id);
    if (versions.length === 0) throw new AppError('not_found');
    return { bundle, versions };
  }

  /** The audit event of a deletion, in its transaction. */
  const audit = (
    tx: Executor,
    userId: string,
    bundle: { id: string; accountId: string },
    action: string,
    data: Record<string, unknown>,
  ) =>
    recordAuditEvent(
      tx,
      {
        accountId: bundle.accountId,
        actorUserId: userId,
        action,
        resourceKind: 'bundle',
        resourceId: bundle.id,
        data,
      },
      deps.clock.now(),
    );

  /** After a deletion: removes the objects nothing needs any more (no version, no publish). */
  async function collect(candidates: readonly string[]) {
    const needed = await objectsStillNeeded(db, candidates);
    for (const sha256 of candidates) {
      if (needed.has(sha256)) continue;
      // A failed removal leaves an orphan behind, never a hole in a version.
      await store
        .delete(sha256)
        .catch((err) => deps.log.warn({ err, sha256 }, 'object not removed'));
    }
  }

  async function requireManager(tx: Executor, userId: string, accountSlug: string, name: string) {
    const bundle = SLUG_PATTERN.test(accountSlug)
      ? await repo.findBundleByAddress(tx, accountSlug, name)
      : undefined;
    if (!bundle) throw new AppError('not_found');
    // Bundle deletion is for owners and admins (docs/reference.md#accounts-and-roles); a member gets 403.
    await membership.requireManager(tx, { userId }, bundle.accountId);
    return bundle;
  }

  return {
    async getBundle(accountSlug: string, name: string): Promise<BundleDetail> {
      const { bundle, versions } = await findPublished(accountSlug, name);
      return toBundleDetail(publicUrl, bundle, versions);
    },

    /** What the dashboard lists: the account's published bundles with their versions. */
    async listAccountBundles(userId: string, accountId: string): Promise<BundleDetail[]> {
      await membership.requireMember(db, { userId }, accountId);
      const bundles = await repo.listAccountBundles(db, accountId);
      const versions = await repo.listVersionsOf(
        db,
        bundles.map((b) => b.id),
      );
      return bundles.flatMap((bundle) => {
        const own = versions.filter((v) => v.bundleId === bundle.id);
        return own.length === 0 ? [] : [toBundleDetail(publicUrl, bundle, own)];
      });
    },

    /** One version (the newest by default), its files and its README's text. */
    async getVersion(accountSlug: string, name: string, version?: number) {
      const { bundle, versions } = await findPublished(accountSlug, name);
      const row = version === undefined ? versions[0] : versions.find((v) => v.version === version);
      if (!row) throw new AppError('not_found');
      const files = await repo.listFiles(db, row.id);
      const readmeFile = files.find((f) => f.path === 'README.md');
      let readme: string | undefined;
      if (readmeFile && Number(readmeFile.size) <= MAX_README_BYTES) {
        const stream = await store.read(readmeFile.sha256);
        readme = stream ? await text(stream) : undefined;
      }
      return { detail: toBundleDetail(publicUrl, bundle, versions), version: row, files, readme };
    },

    /** A file's or the tarball's bytes; `undefined` when the version or path does not exist. */
    async openObject(
      accountSlug: string,
      name: string,
      version: number,
      path: string | null,
    ): Promise<{ stream: Readable; size: number } | undefined> {
      const { versions } = await findPublished(accountSlug, name);
      const row = versions.find((v) => v.version === version);
      if (!row) return undefined;
      const object =
        path === null
          ? { sha256: row.tarballSha256, size: row.tarballSize }
          : await repo.findFile(db, row.id, path);
      if (!object) return undefined;
      const stream = await store.read(object.sha256);
      return stream && { stream, size: Number(object.size) };
    },

    async deleteBundle(userId: string, accountSlug: string, name: string): Promise<void> {
      const candidates = await database.transaction(async (tx) => {
        const bundle = await requireManager(tx, userId, accountSlug, name);
        const versions = await repo.listVersions(tx, bundle.id);
        const shas = await repo.objectsOfVersions(
          tx,
          versions.map((v) => v.id),
        );
        await repo.deleteBundle(tx, bundle.id);
        await audit(tx, userId, bundle, 'bundle.delete', { name });
        return shas;
      });
      await collect(candidates);
    },

    async deleteVersion(userId: string, accountSlug: string, name: string, version: number) {
      const candidates = await database.transaction(async (tx) => {
        const bundle = await requireManager(tx, userId, accountSlug, name);
        const row = (await repo.listVersions(tx, bundle.id)).find((v) => v.version === version);
        if (!row) throw new AppError('not_found');
        const shas = await repo.objectsOfVersions(tx, [row.id]);
        await repo.deleteVersion(tx, row.id);
        await refreshPublished(tx, bundle.id);
        await audit(tx, userId, bundle, 'bundle.delete_version', { name, version });
        return shas;
      });
      await collect(candidates);
    },
  };
}

export type CatalogService = ReturnType<typeof createCatalogService>;
