import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { fromPglite } from 'pg-boss';
import type { DatabaseConfig } from '../config/config.js';
import { makeOwnerOnly } from '../util/owner-only.js';
import { lockDataDir } from './data-dir-lock.js';
import { guardedPool } from './database-unavailable.js';
import { type Notifications, pgliteNotifications, postgresNotifications } from './notifications.js';
import { pgliteDialect } from './pglite-dialect.js';
import type { PoolStatus } from './pool-status.js';
import type { DB } from './schema.js';
import { SessionLock } from './session-lock.js';

/** Runs queries: the database itself or an open transaction. Repositories take one first. */
export type Executor = Kysely<DB>;

/** How pg-boss reaches the same database. */
export type JobsConnection =
  | { readonly kind: 'pglite'; readonly db: ReturnType<typeof fromPglite> }
  | { readonly kind: 'postgres'; readonly connectionString: string };

export interface Database {
  readonly kind: DatabaseConfig['kind'];
  readonly db: Kysely<DB>;
  readonly jobsConnection: JobsConnection;
  /** LISTEN/NOTIFY between the processes of this database (`notify` sends). */
  readonly notifications: Notifications;
  /** How its connections are used now, and the waits for one so far (`/metrics`). */
  poolStatus(): PoolStatus;
  /** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PGlite only: a snapshot of the whole database (tests clone a migrated one from it). */
  dumpDataDir?(): Promise<Blob>;
}

/**
 * PGlite in `dataDir` (or in memory for `memory://`), or PostgreSQL at `url`. `onConnectionError`
 * hears about pooled connections that fail while idle (e.g. PostgreSQL restarted); the pool
 * replaces them.
 */
export async function createDatabase(
  config: DatabaseConfig,
  onConnectionError: (error: Error) => void = () => {},
): Promise<Database> {
  return config.kind === 'pglite'
    ? openPglite(config.dataDir)
    : openPostgres(config.url, onConnectionError);
}

/** `loadDataDir`: start from a dump of another PGlite database (tests clone a migrated one). */
export async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<Database> {
  let unlock = async () => {};
  const onDisk = !dataDir.startsWith('memory://');
  if (onDisk) {
    await mkdir(dataDir, { recursive: true });
    unlock = await lockDataDir(dataDir);
  }
  const isNew = onDisk && !existsSync(path.join(dataDir, 'PG_VERSION'));
  const pglite = await PGlite.create({ dataDir, ...(loadDataDir && { loadDataDir }) }).catch(
    async (error: unknown) => {
      await unlock();
      throw error;
    },
  );
  // A new database's files are written with the modes of PGlite's template (0666), whatever the
  // umask: made owner-only at once (files PostgreSQL adds later follow the umask).
  if (isNew) await makeOwnerOnly(dataDir);
  const lock = new SessionLock();
  const db = new Kysely<DB>({
    dialect: pgliteDialect(pglite, lock),
    plugins: [new CamelCasePlugin()],
  });
  const boss = fromPglite(pglite);
  // pg-boss statements take the same session lock as Kysely, so none lands inside a transaction.
  const jobsDb: typeof boss = {
    ...boss,
    executeSql: (text, values) => lock.run(() => boss.executeSql(text, values)),
    ...(boss.setSessionStatements && {
      setSessionStatements: (statements: string[]) =>
        lock.run(() => boss.setSessionStatements!(statements)),
    }),
    ...(boss.listen && {
      listen: (channel, onNotification, onReconnect) =>
        lock.run(() => boss.listen!(channel, onNotification, onReconnect)),
    }),
  };
  const notifications = pgliteNotifications(pglite, lock);
  return {
    kind: 'pglite',
    db,
    notifications,
    jobsConnection: { kind: 'pglite', db: jobsDb },
    poolStatus: () => lock.status(),
    transaction: (fn) => db.transaction().execute((tx) => lock.markTransaction(() => fn(tx))),
    dumpDataDir: () => lock.run(() => pglite.dumpDataDir('none')),
    close: async () => {
      await notifications.close();
      await db.destroy();
      await lock.run(() => pglite.close());
      await unlock();
    },
  };
}

export async function openPostgres(
  url: string,
  onConnectionError: (error: Error) => void = () => {},
): Promise<Database> {
  // A server that does not answer fails a request in 5 s (503), never hangs it.
  const max = 10;
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 });
  // Without a listener, an idle connection's error would be an unhandled 'error' event.
  pool.on('error', onConnectionError);
  let waits = 0;
  let waitSeconds = 0;
  const counted = {
    async connect() {
      // node-postgres queues a caller when no connection is idle and no other may be opened.
      const waiting = pool.idleCount === 0 && pool.totalCount >= max;
      const startedAt = performance.now();
      try {
        return await pool.connect();
      } finally {
        if (waiting) {
          waits += 1;
          waitSeconds += (performance.now() - startedAt) / 1000;
        }
      }
    },
    end: () => pool.end(),
  };
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: guardedPool(counted) }),
    plugins: [new CamelCasePlugin()],
  });
  const notifications = postgresNotifications(url, onConnectionError);
  return {
    kind: 'postgres',
    db,
    notifications,
    jobsConnection: { kind: 'postgres', connectionString: url },
    poolStatus: () => ({
      max,
      open: pool.totalCount,
      inUse: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
      waits,
      waitSeconds,
    }),
    transaction: (fn) => db.transaction().execute(fn),
    close: async () => {
      await notifications.close();
      await db.destroy();
    },
  };
}
