import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('subdomain', 'text', (col) => col.notNull().unique())
    .addColumn('size', 'text', (col) => col.notNull())
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('billing_type', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('cohort', 'text', (col) => col.notNull().defaultTo('current'))
    // HMAC token generation: bumping it invalidates the Agent's token.
    .addColumn('token_gen', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('provision_deadline_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('agents_account_id_idx').on('agents').column('account_id').execute();

  // Usage: one row per period in one state and billing type; the open period has no end.
  await db.schema
    .createTable('usage_periods')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    // Insertion order, for reading a resource's history when timestamps tie.
    .addColumn('seq', 'bigint', (col) => col.notNull().generatedAlwaysAsIdentity())
    .addColumn('resource_kind', 'text', (col) => col.notNull())
    .addColumn('resource_id', 'uuid', (col) => col.notNull())
    .addColumn('account_id', 'uuid', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('billing_type', 'text', (col) => col.notNull())
    .addColumn('size', 'text', (col) => col.notNull())
    .addColumn('region', 'text', (col) => col.notNull())
    .addColumn('started_at', 'timestamptz', (col) => col.notNull())
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('usage_periods_open_idx')
    .on('usage_periods')
    .column('resource_id')
    .unique()
    .where(sql.ref('ended_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('usage_periods_account_idx')
    .on('usage_periods')
    .columns(['account_id', 'started_at'])
    .execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull())
    .addColumn('actor_user_id', 'uuid')
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('resource_kind', 'text', (col) => col.notNull())
    .addColumn('resource_id', 'uuid', (col) => col.notNull())
    .addColumn('data', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('audit_events_account_idx')
    .on('audit_events')
    .columns(['account_id', 'created_at'])
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  for (const table of ['audit_events', 'usage_periods', 'agents']) {
    await db.schema.dropTable(table).execute();
  }
}
