import { type Kysely, type MigrationResultSet, Migrator, sql } from 'kysely';
import { migrations } from './migrations/index.js';

/** Migrations and these checks are written against no particular schema (Kysely's advice). */
// biome-ignore lint/suspicious/noExplicitAny: see above.
export type AnyKysely = Kysely<any>;

function migrator(db: AnyKysely): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => ({ ...migrations }) } });
}

/** Applies every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: AnyKysely): Promise<string[]> {
  const { error, results }: MigrationResultSet = await migrator(db).migrateToLatest();
  if (error) throw error;
  return (results ?? []).map((result) => result.migrationName);
}

/** True when every known migration has been applied. */
export async function isMigrated(db: AnyKysely): Promise<boolean> {
  const applied = await migrator(db).getMigrations();
  return applied.every((migration) => migration.executedAt !== undefined);
}

/** Cheapest possible round trip, for readiness checks. */
export async function ping(db: AnyKysely): Promise<void> {
  await sql`select 1`.execute(db);
}
