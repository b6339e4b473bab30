import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** One row of a count by two labels. */
export interface LabelCount {
  readonly label: string;
  readonly state: string;
  readonly n: number;
}

/** pg-boss's jobs by queue and state, in one query on its own table. */
export async function countJobs(db: Executor): Promise<LabelCount[]> {
  const { rows } = await sql<LabelCount>`
    select name as label, state::text as state, count(*)::int as n
    from pgboss.job group by name, state`.execute(db);
  return rows;
}

/** Agents and Plain VMs by state, in one query (`label` is the machine kind). */
export async function countMachines(db: Executor): Promise<LabelCount[]> {
  const { rows } = await sql<LabelCount>`
    select 'agent' as label, state, count(*)::int as n from agents group by state
    union all
    select 'plain_vm' as label, state, count(*)::int as n from plain_vms group by state`.execute(
    db,
  );
  return rows;
}
