import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.
// Numbered 0006: 0005 is taken by work on another branch.

export async function up(db: AnyKysely): Promise<void> {
  // One row per authorization attempt, deleted when its callback arrives (single use).
  await db.schema
    .createTable('app_authorization_states')
    // SHA-256 of the state: a database dump does not hand out live states.
    .addColumn('state_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('account_id', 'uuid', (col) =>
      col.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('code_verifier', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('app_connections')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('provider_subject', 'text', (col) => col.notNull())
    .addColumn('provider_account_id', 'text', (col) => col.notNull())
    .addColumn('provider_account_name', 'text', (col) => col.notNull())
    // Sealed envelopes (token-cipher.ts), never plaintext.
    .addColumn('refresh_token', 'text')
    .addColumn('access_token', 'text', (col) => col.notNull())
    .addColumn('access_token_expires_at', 'timestamptz')
    .addColumn('token_requested_at', 'timestamptz')
    // The refresh lease: who refreshes and until when (see connection-tokens.ts).
    .addColumn('refresh_lease_owner', 'text')
    .addColumn('refresh_lease_until', 'timestamptz')
    .addColumn('refresh_failed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    // Re-authorizing the same provider account replaces the connection (docs/reference.md).
    .addUniqueConstraint('app_connections_account_provider_subject_key', [
      'account_id',
      'provider',
      'provider_subject',
    ])
    .execute();

  // Deleted connections: their token endpoint answers 410, everything else 404.
  await db.schema
    .createTable('app_connection_tombstones')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull())
    .addColumn('deleted_at', 'timestamptz', (col) => col.notNull())
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('app_connection_tombstones').execute();
  await db.schema.dropTable('app_connections').execute();
  await db.schema.dropTable('app_authorization_states').execute();
}
