import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  await db.schema
    .createTable('vault_entries')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('label', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    // `type base64` only: the comment stays with the user.
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('fingerprint_sha256', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('vault_entries_account_fingerprint_key', [
      'account_id',
      'fingerprint_sha256',
    ])
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('vault_entries').execute();
}
