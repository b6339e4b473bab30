import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // A user's notice kinds that are off: a row only where they turned one off (or back on), so
  // every kind, including one added later, starts on.
  await db.schema
    .createTable('notice_preferences')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addPrimaryKeyConstraint('notice_preferences_pkey', ['user_id', 'kind'])
    .execute();

  // Each notice event mailed, by the id its producer gave it: a retried job finds its event here
  // and mails nothing again. Rows are a day's worth of events at most; kept for the record.
  await db.schema
    .createTable('notice_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // When a notice about one subject (an Agent) was last queued, for the kinds sent at most once
  // in a while (an idle stop: once a day per Agent).
  await db.schema
    .createTable('notice_throttles')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'uuid', (c) => c.notNull())
    .addColumn('last_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('notice_throttles_pkey', ['kind', 'subject_id'])
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('notice_throttles').execute();
  await db.schema.dropTable('notice_events').execute();
  await db.schema.dropTable('notice_preferences').execute();
}
