import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // A stopped legacy-cohort Agent has a paused rate of its own: the period says which cohort.
  await db.schema
    .alterTable('usage_periods')
    .addColumn('cohort', 'text', (c) =>
      c.notNull().defaultTo('current').check(sql`cohort in ('current', 'legacy')`),
    )
    .execute();
  await sql`update usage_periods u set cohort = a.cohort
    from agents a where a.id = u.resource_id and a.cohort <> 'current'`.execute(db);

  // A removed slot is kept, with when it went: slots are charged by the second they were held.
  await db.schema.alterTable('subscription_slots').addColumn('removed_at', 'timestamptz').execute();

  // The subscription's standing replaces the flag; the flag stays, derived, for every reader.
  await db.schema
    .alterTable('accounts')
    .addColumn('subscription_status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('inactive')
        .check(sql`subscription_status in ('inactive', 'active', 'past_due')`),
    )
    .execute();
  await sql`update accounts set subscription_status = 'active' where subscription_active`.execute(
    db,
  );
  await db.schema.alterTable('accounts').dropColumn('subscription_active').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('subscription_active', 'boolean', (c) =>
      c.generatedAlwaysAs(sql`subscription_status in ('active', 'past_due')`).stored(),
    )
    .execute();

  // Invoices: immutable once issued but for their payment; numbered from one sequence without
  // gaps (the counter row is taken in the issuing transaction, unlike a database sequence).
  // No foreign key to accounts: an invoice outlives the account it was issued to.
  // `closed_through`: the end of the latest calendar month closed for every account (null until
  // the first close); the period close starts after it.
  await db.schema
    .createTable('invoice_counter')
    .addColumn('id', 'boolean', (c) => c.primaryKey().defaultTo(true).check(sql`id`))
    .addColumn('last_number', 'integer', (c) => c.notNull())
    .addColumn('closed_through', 'timestamptz')
    .execute();
  await sql`insert into invoice_counter (id, last_number) values (true, 0)`.execute(db);
  await db.schema
    .createTable('invoices')
    .addColumn('number', 'integer', (c) => c.primaryKey())
    .addColumn('account_id', 'uuid', (c) => c.notNull())
    .addColumn('period_start', 'timestamptz', (c) => c.notNull())
    .addColumn('period_end', 'timestamptz', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('minor_unit_digits', 'integer', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'paid')`))
    .addColumn('issued_at', 'timestamptz', (c) => c.notNull())
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('paid_at', 'timestamptz')
    // The payment processor's own id of the invoice that collects this one, once it has one.
    .addColumn('provider_invoice_id', 'text')
    .addUniqueConstraint('invoices_account_period_key', ['account_id', 'period_start'])
    .execute();
  await db.schema
    .createTable('invoice_lines')
    .addColumn('invoice_number', 'integer', (c) =>
      c.notNull().references('invoices.number').onDelete('cascade'),
    )
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('slot', 'metered', 'cap')`))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('size', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'uuid')
    .addColumn('rate', 'text')
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('seconds', 'bigint', (c) => c.notNull())
    .addColumn('unit_amount', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('invoice_lines_pkey', ['invoice_number', 'position'])
    .execute();

  // The payment processor's side of an account (BILLING_PROVIDER=stripe): its customer and
  // subscription ids. `status_event_at`: when the newest processor event applied to the
  // subscription's standing happened; an older one arriving later changes nothing.
  await db.schema
    .createTable('billing_customers')
    .addColumn('account_id', 'uuid', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull().unique())
    .addColumn('subscription_id', 'text', (c) => c.unique())
    .addColumn('status_event_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // Who is talking to the payment processor about an account now (a lease, so that one
  // process at a time makes its subscription follow the account, across replicas, without
  // holding a transaction over network calls).
  await db.schema
    .createTable('billing_leases')
    .addColumn('account_id', 'uuid', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('held_until', 'timestamptz', (c) => c.notNull())
    .execute();
  // Webhook events already handled, by the processor's event id: a duplicate is acknowledged and
  // ignored. `occurred_at` orders events of one object, which may arrive in any order.
  await db.schema
    .createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  for (const table of [
    'billing_events',
    'billing_leases',
    'billing_customers',
    'invoice_lines',
    'invoices',
    'invoice_counter',
  ]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('accounts').dropColumn('subscription_active').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('subscription_active', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`update accounts set subscription_active = subscription_status <> 'inactive'`.execute(
    db,
  );
  await db.schema.alterTable('accounts').dropColumn('subscription_status').execute();
  await db.schema.alterTable('subscription_slots').dropColumn('removed_at').execute();
  await db.schema.alterTable('usage_periods').dropColumn('cohort').execute();
}
