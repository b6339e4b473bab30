import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // An event names its actor as they were when it was written: a later change of the user's
  // address or name (or the user's deletion) must not rewrite the account's history.
  await db.schema
    .alterTable('audit_events')
    .addColumn('actor_email', 'text')
    .addColumn('actor_name', 'text')
    .execute();
  // Older events get the actor as they are now, the closest record left; an actor already
  // deleted stays unnamed, as the log showed it before.
  await sql`
    update audit_events e set actor_email = u.email, actor_name = u.name
    from users u where u.id = e.actor_user_id
  `.execute(db);
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema
    .alterTable('audit_events')
    .dropColumn('actor_email')
    .dropColumn('actor_name')
    .execute();
}
