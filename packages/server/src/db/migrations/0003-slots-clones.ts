import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // A slot is a seat on the subscription for one (product, size, region); it stays until removed.
  await db.schema
    .createTable('subscription_slots')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('product', 'text', (col) => col.notNull())
    .addColumn('size', 'text', (col) => col.notNull())
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('subscription_slots_kind_idx')
    .on('subscription_slots')
    .columns(['account_id', 'product', 'size', 'region'])
    .execute();

  await db.schema
    .alterTable('agents')
    .addColumn('slot_id', 'uuid', (col) => col.references('subscription_slots.id'))
    // Set on a clone source while its disk is copied: the id of the clone.
    .addColumn('cloning_by', 'uuid')
    .addColumn('clone_source_id', 'uuid')
    .execute();
  // One resource per slot, enforced by the database.
  await db.schema
    .createIndex('agents_slot_id_idx')
    .on('agents')
    .column('slot_id')
    .unique()
    .where(sql.ref('slot_id'), 'is not', null)
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema
    .alterTable('agents')
    .dropColumn('slot_id')
    .dropColumn('cloning_by')
    .dropColumn('clone_source_id')
    .execute();
  await db.schema.dropTable('subscription_slots').execute();
}
