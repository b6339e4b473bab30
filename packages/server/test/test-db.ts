import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { type Database, openPglite, openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createJobQueue } from '../src/jobs/queue.js';
import { createLogger } from '../src/logger.js';

export type DatabaseKind = 'pglite' | 'postgres';

/**
 * The only environment tests read: a PostgreSQL server to run every database test on too, and
 * the Incus socket of the `*.incus.test.ts` files.
 */
export const testEnv = {
  TEST_DATABASE_URL: process.env.TEST_DATABASE_URL,
  INCUS_SOCKET: process.env.INCUS_SOCKET,
  /** Set by CI services: a test that needs TEST_DATABASE_URL fails there without it. */
  CI: process.env.CI,
} as const;
const TEST_DATABASE_URL = testEnv.TEST_DATABASE_URL;

/** The PostgreSQL URL of one database on the test server. */
export function testDatabaseUrl(database: string): string {
  const url = new URL(TEST_DATABASE_URL as string);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The environment of the test process, for the service processes some tests start. */
export const parentEnv = (): Readonly<Record<string, string | undefined>> => ({ ...process.env });

/** PGlite always; PostgreSQL too when `TEST_DATABASE_URL` is set (as in CI). */
export const databaseKinds: readonly DatabaseKind[] = TEST_DATABASE_URL
  ? ['pglite', 'postgres']
  : ['pglite'];

export interface TestDatabase {
  readonly database: Database;
  /** Where another process reaches it (PostgreSQL only). */
  readonly url?: string;
  /** Removes what `database.close()` leaves behind (the PostgreSQL database). */
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own, cloned from a template migrated once. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  return kind === 'pglite' ? freshPglite() : freshPostgres();
}

/** Schema and pg-boss tables, as every service start creates them. */
async function prepare(database: Database) {
  await migrateToLatest(database.db.withoutPlugins());
  const jobs = createJobQueue(database, createLogger({ logLevel: 'silent' }));
  await jobs.start([], { work: false });
  await jobs.stop();
}

let pgliteTemplate: Promise<Blob> | undefined;

async function freshPglite(): Promise<TestDatabase> {
  pgliteTemplate ??= (async () => {
    const template = await openPglite('memory://');
    await prepare(template);
    const dump = await template.dumpDataDir!();
    await template.close();
    return dump;
  })();
  const database = await openPglite('memory://', await pgliteTemplate);
  return { database, drop: async () => {} };
}

const migrationsDir = path.join(import.meta.dirname, '../src/db/migrations');

/** Changes whenever a migration file does, so a stale template is never reused. */
async function migrationsHash(): Promise<string> {
  const hash = createHash('sha256').update('pg-boss 12.35.0');
  for (const file of (await readdir(migrationsDir)).sort()) {
    hash.update(file).update(await readFile(path.join(migrationsDir, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

async function freshPostgres(): Promise<TestDatabase> {
  const template = `svc_tpl_${await migrationsHash()}`;
  const name = `svc_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    // One test file builds the template; the others wait for it.
    await admin.query('select pg_advisory_lock(727274)');
    const exists = await admin.query('select 1 from pg_database where datname = $1', [template]);
    if (exists.rowCount === 0) {
      const building = `${template}_building`;
      await admin.query(`drop database if exists ${building} with (force)`);
      await admin.query(`create database ${building}`);
      const database = await openPostgres(testDatabaseUrl(building));
      await prepare(database);
      await database.close();
      await admin.query(`alter database ${building} rename to ${template}`);
      // Templates of earlier migration sets are of no more use.
      const stale = await admin.query<{ datname: string }>(
        "select datname from pg_database where datname like 'svc\\_tpl\\_%' and datname <> $1",
        [template],
      );
      for (const { datname } of stale.rows)
        await admin.query(`drop database if exists ${datname} with (force)`);
    }
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.query('select pg_advisory_unlock(727274)').catch(() => {});
    await admin.end();
  }
  return {
    database: await openPostgres(testDatabaseUrl(name)),
    url: testDatabaseUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
