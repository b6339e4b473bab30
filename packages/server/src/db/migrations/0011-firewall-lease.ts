import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Who is changing a Plain VM's firewall at the provider, until when: a PUT or the reconciler
  // holds it from before the driver call until the database has the result, so neither acts on
  // rules the other is halfway through changing.
  await db.schema
    .alterTable('plain_vms')
    .addColumn('firewall_lease_until', 'timestamptz')
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.alterTable('plain_vms').dropColumn('firewall_lease_until').execute();
}
