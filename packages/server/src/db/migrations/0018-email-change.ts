import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // A requested e-mail change waits here until the link mailed to the new address is opened:
  // until then `email` (sign-in, resets, notices) stays the old address. One at a time per user;
  // only the SHA-256 of the link's secret is kept.
  await db.schema
    .alterTable('users')
    .addColumn('pending_email', 'text')
    .addColumn('pending_email_token_hash', 'text', (c) => c.unique())
    .addColumn('pending_email_expires_at', 'timestamptz')
    .execute();

  // The old address gets a link that takes the account back: it cancels a pending change, or
  // reverts one that took effect.
  await sql`alter table email_links drop constraint email_links_purpose_check`.execute(db);
  await sql`alter table email_links add constraint email_links_purpose_check
    check (purpose in ('verify_email', 'reset_password', 'undo_email_change'))`.execute(db);
}

export async function down(db: AnyKysely): Promise<void> {
  await sql`delete from email_links where purpose = 'undo_email_change'`.execute(db);
  await sql`alter table email_links drop constraint email_links_purpose_check`.execute(db);
  await sql`alter table email_links add constraint email_links_purpose_check
    check (purpose in ('verify_email', 'reset_password'))`.execute(db);
  await db.schema
    .alterTable('users')
    .dropColumn('pending_email')
    .dropColumn('pending_email_token_hash')
    .dropColumn('pending_email_expires_at')
    .execute();
}
