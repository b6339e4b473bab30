import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Counters now hold a streak of attempts and the time of the last one (growing delays) instead
  // of a fixed window; the old windows mean nothing to the new rule, so they start over.
  await db.deleteFrom('rate_limits').execute();
  await db.schema
    .alterTable('rate_limits')
    .renameColumn('window_started_at', 'last_attempt_at')
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.deleteFrom('rate_limits').execute();
  await db.schema
    .alterTable('rate_limits')
    .renameColumn('last_attempt_at', 'window_started_at')
    .execute();
}
