import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Snapshots of a machine's disk (an Agent's or a Plain VM's). A deleted one keeps its row with
  // `deleted_at`: its storage is billed by the second it was held. `provider_ref` is what the
  // machine's driver calls it (an Incus snapshot's name, a Hetzner image's id), once it has it.
  await db.schema
    .createTable('machine_snapshots')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('machine_kind', 'text', (c) =>
      c.notNull().check(sql`machine_kind in ('agent', 'plain_vm')`),
    )
    .addColumn('machine_id', 'uuid', (c) => c.notNull())
    // The machine's account while it holds the snapshot (moved with it on transfer).
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('manual', 'backup')`))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('creating', 'ready', 'failed')`),
    )
    .addColumn('size_bytes', 'bigint')
    .addColumn('failure_reason', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('ready_at', 'timestamptz')
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  // A machine's live snapshots by name: a backup's daily name is taken once.
  await db.schema
    .createIndex('machine_snapshots_name_idx')
    .on('machine_snapshots')
    .columns(['machine_id', 'name'])
    .unique()
    .where(sql<boolean>`deleted_at is null`)
    .execute();
  await db.schema
    .createIndex('machine_snapshots_machine_idx')
    .on('machine_snapshots')
    .columns(['machine_id', 'created_at'])
    .execute();

  for (const table of ['agents', 'plain_vms']) {
    await db.schema
      .alterTable(table)
      // A snapshot being taken or restored: lifecycle moves and other disk operations wait.
      .addColumn('disk_operation', 'text', (c) =>
        c.check(sql`disk_operation in ('snapshot', 'restore')`),
      )
      // Daily backups: whether on, how many kept, and the hour (UTC) each machine takes its
      // own, drawn at random so they spread over the day.
      .addColumn('backups_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('backups_keep', 'integer', (c) =>
        c.notNull().defaultTo(7).check(sql`backups_keep between 1 and 14`),
      )
      .addColumn('backups_hour', 'integer', (c) =>
        c
          .notNull()
          .defaultTo(sql`floor(random() * 24)::int`)
          .check(sql`backups_hour between 0 and 23`),
      )
      .execute();
  }
}

export async function down(db: AnyKysely): Promise<void> {
  for (const table of ['agents', 'plain_vms']) {
    await db.schema
      .alterTable(table)
      .dropColumn('disk_operation')
      .dropColumn('backups_enabled')
      .dropColumn('backups_keep')
      .dropColumn('backups_hour')
      .execute();
  }
  await db.schema.dropTable('machine_snapshots').execute();
}
