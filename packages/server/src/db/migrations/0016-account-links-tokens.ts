import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Users who signed up before verification existed keep their standing: their address counts
  // as verified from the day they signed up.
  await db.schema.alterTable('users').addColumn('email_verified_at', 'timestamptz').execute();
  await sql`update users set email_verified_at = created_at`.execute(db);

  // Links sent by e-mail to verify an address or reset a password: only the SHA-256 of the
  // link's secret is kept; `used_at` makes each single-use.
  await db.schema
    .createTable('email_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) =>
      c.notNull().check(sql`purpose in ('verify_email', 'reset_password')`),
    )
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The address the link went to: a verification counts only while it is still the user's.
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('email_links_user_idx')
    .on('email_links')
    .columns(['user_id', 'purpose'])
    .execute();

  // Pending invitations: one per organization and address (a new one replaces the old);
  // accepted or revoked ones are deleted, the audit log keeps their story.
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('invitations_account_email_key', ['account_id', 'email'])
    .execute();

  // Personal access tokens: the SHA-256 of the token is the lookup key.
  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('read', 'write')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_tokens_user_idx').on('api_tokens').column('user_id').execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('api_tokens').execute();
  await db.schema.dropTable('invitations').execute();
  await db.schema.dropTable('email_links').execute();
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
}
