import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  await db.schema
    .createTable('plain_vms')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    // The hostname; unique only per account, as hostnames are.
    .addColumn('name', 'text', (col) => col.notNull())
    // The API's `tier`; `size` here so lifecycle and billing code read both tables alike.
    .addColumn('size', 'text', (col) => col.notNull())
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('os_image_key', 'text', (col) => col.notNull())
    .addColumn('billing_type', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('password_enabled', 'boolean', (col) => col.notNull())
    // crypt(3) hash of the one-time password, kept only until the server has it.
    .addColumn('password_hash', 'text')
    .addColumn('vault_entry_ids', 'jsonb', (col) => col.notNull())
    // The chosen keys as they were at creation: deleting a Vault key leaves VMs alone.
    .addColumn('authorized_keys', 'jsonb', (col) => col.notNull())
    // The rules as the provider last reported them.
    .addColumn('firewall_rules', 'jsonb', (col) => col.notNull())
    .addColumn('ipv4', 'text')
    .addColumn('ipv6', 'text')
    .addColumn('ssh_host', 'text')
    .addColumn('ssh_port', 'integer')
    .addColumn('slot_id', 'uuid', (col) => col.references('subscription_slots.id'))
    .addColumn('provision_deadline_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('plain_vms_account_id_idx')
    .on('plain_vms')
    .column('account_id')
    .execute();
  await db.schema
    .createIndex('plain_vms_slot_id_idx')
    .on('plain_vms')
    .column('slot_id')
    .unique()
    .where(sql.ref('slot_id'), 'is not', null)
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('plain_vms').execute();
}
