import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Where the Agent's gateway listens when the driver gives each Agent its own port (local).
  await db.schema.alterTable('agents').addColumn('gateway_port', 'integer').execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('gateway_port').execute();
}
