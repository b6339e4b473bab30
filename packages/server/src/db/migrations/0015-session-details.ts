import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // A session gets an id of its own (the settings page names it; the cookie's hash never leaves
  // the database), the browser and address it began from, and when it was last used.
  await db.schema
    .alterTable('sessions')
    .addColumn('id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_agent', 'text')
    .addColumn('client_address', 'text')
    .addColumn('last_seen_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('sessions_id_idx').on('sessions').column('id').unique().execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropIndex('sessions_id_idx').execute();
  await db.schema
    .alterTable('sessions')
    .dropColumn('id')
    .dropColumn('user_agent')
    .dropColumn('client_address')
    .dropColumn('last_seen_at')
    .execute();
}
