import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Every Agent is reached through the service's edge now, which asks the compute driver where
  // the gateway listens: the local driver's per-Agent port is no longer part of the Agent's URL.
  await db.schema.alterTable('agents').dropColumn('gateway_port').execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.alterTable('agents').addColumn('gateway_port', 'integer').execute();
}
