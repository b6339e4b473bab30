import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Idle stop: the minutes an Agent may sit unused before the service stops it (0 = never), the
  // last time a person used it through the edge, and why the service stopped it. Agents made
  // before this keep running until someone stops them (0), as they were promised; new ones get
  // AGENT_IDLE_STOP_MINUTES unless their creator chooses.
  await db.schema
    .alterTable('agents')
    .addColumn('idle_stop_minutes', 'integer', (c) =>
      c.notNull().defaultTo(0).check(sql`idle_stop_minutes between 0 and 10080`),
    )
    .addColumn('last_activity_at', 'timestamptz')
    .addColumn('stopped_reason', 'text', (c) => c.check(sql`stopped_reason in ('idle')`))
    .execute();
  // The idle sweep reads only running Agents that can be idle-stopped.
  await db.schema
    .createIndex('agents_idle_stop_idx')
    .on('agents')
    .column('id')
    .where(sql<boolean>`state = 'running' and idle_stop_minutes > 0`)
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropIndex('agents_idle_stop_idx').execute();
  await db.schema
    .alterTable('agents')
    .dropColumn('idle_stop_minutes')
    .dropColumn('last_activity_at')
    .dropColumn('stopped_reason')
    .execute();
}
