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
import { pgliteDialect } from './pglite-dialect.js';
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
  return {
    kind: 'pglite',
    db,
    jobsConnection: { kind: 'pglite', db: jobsDb },
    transaction: (fn) => db.transaction().execute((tx) => lock.markTransaction(() => fn(tx))),
    dumpDataDir: () => lock.run(() => pglite.dumpDataDir('none')),
    close: async () => {
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
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // Without a listener, an idle connection's error would be an unhandled 'error' event.
  pool.on('error', onConnectionError);
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new CamelCasePlugin()],
  });
  return {
    kind: 'postgres',
    db,
    jobsConnection: { kind: 'postgres', connectionString: url },
    transaction: (fn) => db.transaction().execute(fn),
    close: () => db.destroy(),
  };
}
