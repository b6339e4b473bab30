import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // Snapshot storage, as usage periods are for machines: one row per stretch of time a ready
  // snapshot was held by one account at one size; the open one has no end. The snapshot's row
  // says only who holds it now; these say who held it when, so a transfer splits its storage
  // between the accounts at the transfer's second.
  await db.schema
    .createTable('snapshot_usage')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    // Insertion order, for reading a snapshot's history when timestamps tie.
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('snapshot_id', 'uuid', (c) => c.notNull().references('machine_snapshots.id'))
    .addColumn('machine_kind', 'text', (c) =>
      c.notNull().check(sql`machine_kind in ('agent', 'plain_vm')`),
    )
    .addColumn('machine_id', 'uuid', (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull().check(sql`size_bytes >= 0`))
    // The machine's size and region then, for the bill's line (its row goes with its destroy).
    .addColumn('size', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('snapshot_usage_open_idx')
    .on('snapshot_usage')
    .column('snapshot_id')
    .unique()
    .where(sql.ref('ended_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('snapshot_usage_account_idx')
    .on('snapshot_usage')
    .columns(['account_id', 'started_at'])
    .execute();

  // Bills gain snapshot storage lines.
  await sql`alter table invoice_lines drop constraint invoice_lines_kind_check`.execute(db);
  await sql`alter table invoice_lines add constraint invoice_lines_kind_check
    check (kind in ('slot', 'metered', 'cap', 'snapshot'))`.execute(db);
}

export async function down(db: AnyKysely): Promise<void> {
  await sql`delete from invoice_lines where kind = 'snapshot'`.execute(db);
  await sql`alter table invoice_lines drop constraint invoice_lines_kind_check`.execute(db);
  await sql`alter table invoice_lines add constraint invoice_lines_kind_check
    check (kind in ('slot', 'metered', 'cap'))`.execute(db);
  await db.schema.dropTable('snapshot_usage').execute();
}
