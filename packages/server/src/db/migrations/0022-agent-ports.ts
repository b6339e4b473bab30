import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // An Agent's shared ports: who may open `<port>--<subdomain>.<agent domain>`. A port without a
  // row is not shared (its URL answers 404); the Agent's destruction takes its rows with it.
  await db.schema
    .createTable('agent_ports')
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('port', 'integer', (c) => c.notNull().check(sql`port between 1024 and 65535`))
    .addColumn('share', 'text', (c) =>
      c.notNull().check(sql`share in ('private', 'account', 'public')`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('agent_ports_pkey', ['agent_id', 'port'])
    .execute();

  // Spent port tickets, by nonce, until they would have expired anyway: a ticket opens a port
  // once, whichever of the service's processes it reaches.
  await db.schema
    .createTable('agent_port_tickets')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('agent_port_tickets').execute();
  await db.schema.dropTable('agent_ports').execute();
}
