import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** One row of a count by two labels. */
export interface LabelCount {
  readonly label: string;
  readonly state: string;
  readonly n: number;
}

/** pg-boss's jobs of one queue in one state, and how long its oldest runnable one has waited. */
export interface JobCount extends LabelCount {
  /** Seconds since the oldest job of this row became runnable (0: none waits). */
  readonly oldestWaitingSeconds: number;
}

/**
 * pg-boss's jobs by queue and state, in one query on its own table. A job waits from its
 * `start_after` (its insert, or when its retry's delay ran out) until a worker claims it.
 */
export async function countJobs(db: Executor): Promise<JobCount[]> {
  const { rows } = await sql<JobCount>`
    select name as label, state::text as state, count(*)::int as n,
      coalesce(extract(epoch from now() - min(start_after)
        filter (where state in ('created', 'retry') and start_after <= now())), 0)::float8
        as oldest_waiting_seconds
    from pgboss.job group by name, state`.execute(db);
  return rows;
}

/** A count of machines of one kind in one state on one driver. */
export interface MachineCount extends LabelCount {
  readonly driver: string;
}

/** Agents and Plain VMs by state and driver, in one query (`label` is the machine kind). */
export async function countMachines(db: Executor): Promise<MachineCount[]> {
  const { rows } = await sql<MachineCount>`
    select 'agent' as label, state, provider as driver, count(*)::int as n
    from agents group by state, provider
    union all
    select 'plain_vm' as label, state, provider as driver, count(*)::int as n
    from plain_vms group by state, provider`.execute(db);
  return rows;
}
