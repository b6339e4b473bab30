import { CHANGES } from '@svc/contract';
import { type Insertable, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { AgentRow, AgentsTable } from '../db/schema.js';
import { findMachine } from '../lifecycle/machine.repo.js';

/**
 * The column change that moves an Agent's token generation on, so that every token issued
 * before is dead: a transfer, and a destroy (its token stays dead even if teardown fails).
 */
export const NEXT_TOKEN_GEN = { tokenGen: sql<number>`token_gen + 1` };

export const insertAgent = (db: Executor, agent: Insertable<AgentsTable>) =>
  db.insertInto('agents').values(agent).returningAll().executeTakeFirstOrThrow();

export const findAgent = (db: Executor, id: string) => findMachine<AgentRow>(db, 'agents', id);

export const listAgents = (db: Executor, accountIds: readonly string[]) =>
  accountIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('agents')
        .selectAll()
        .where('accountId', 'in', accountIds)
        .orderBy('createdAt')
        .orderBy('id')
        .execute();

export const setCohort = (
  db: Executor,
  id: string,
  cohort: 'current' | 'legacy',
  provider: string,
  at: Date,
) =>
  db
    .updateTable('agents')
    .set({ cohort, provider, updatedAt: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

/** Bumps the token generation: every token issued before stops working. */
export const bumpTokenGen = (db: Executor, id: string) =>
  db
    .updateTable('agents')
    .set((eb) => ({ tokenGen: eb('tokenGen', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

/**
 * Marks `sourceId` as being cloned by `cloneId`, only if it is running or stopped and not already
 * being cloned: of concurrent clone requests exactly one gets the row.
 */
export const claimCloneSource = (db: Executor, sourceId: string, cloneId: string, at: Date) =>
  db
    .updateTable('agents')
    .set({ cloningBy: cloneId, updatedAt: at })
    .where('id', '=', sourceId)
    .where('state', 'in', CHANGES.clone)
    .where('cloningBy', 'is', null)
    // A snapshot or restore in flight: the disk is not to be copied until it ends.
    .where('diskOperation', 'is', null)
    .returningAll()
    .executeTakeFirst();

/** The clone's disk is copied (or never will be): its source is free again. */
export const releaseCloneSource = (db: Executor, cloneId: string) =>
  db.updateTable('agents').set({ cloningBy: null }).where('cloningBy', '=', cloneId).execute();

/** The Agent a subdomain names, with only what the edge needs to route to it. */
export const findAgentBySubdomain = (db: Executor, subdomain: string) =>
  db
    .selectFrom('agents')
    .select(['id', 'state'])
    .where('subdomain', '=', subdomain)
    .executeTakeFirst();

/** Drops the sealed credentials an adopter gave, once provisioning has ended either way. */
export const forgetAdoptionCredentials = (db: Executor, id: string) =>
  db
    .updateTable('agents')
    .set({ adoptionCredentials: null })
    .where('id', '=', id)
    .where('adoptionCredentials', 'is not', null)
    .execute();

/** A person's setting: minutes unused after which the service stops the Agent (0: never). */
export const setIdleStopMinutes = (db: Executor, id: string, minutes: number, at: Date) =>
  db
    .updateTable('agents')
    .set({ idleStopMinutes: minutes, updatedAt: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

/** The edge saw a person use the Agent at `at` (never moves the time back). */
export const touchActivity = (db: Executor, id: string, at: Date) =>
  db
    .updateTable('agents')
    .set({ lastActivityAt: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('lastActivityAt', 'is', null), eb('lastActivityAt', '<', at)]))
    .execute();

/**
 * A running Agent unused for its `idleStopMinutes` (each `unitMs` long) at `at`: idle since the
 * later of its last activity and its last change, which its move into `running` is, so a
 * started Agent gets its whole time. Not one being cloned or snapshotted (a stop waits for the
 * copy).
 */
const idleAt = (at: Date, unitMs: number) =>
  sql<boolean>`state = 'running' and idle_stop_minutes > 0 and cloning_by is null
    and disk_operation is null
    and greatest(last_activity_at, updated_at)
      + idle_stop_minutes * ${unitMs}::integer * interval '1 millisecond' <= ${at}::timestamptz`;

/** One keyset page of the ids of Agents idle at `at`. */
export const pageOfIdleAgentIds = async (
  db: Executor,
  page: { at: Date; unitMs: number; afterId: string | null; limit: number },
) => {
  let query = db.selectFrom('agents').select('id').where(idleAt(page.at, page.unitMs));
  if (page.afterId) query = query.where('id', '>', page.afterId);
  const rows = await query.orderBy('id').limit(page.limit).execute();
  return rows.map((row) => row.id);
};

/**
 * The Agent, locked for the transaction, if it is still idle at `at`: activity that landed
 * since the sweep read it keeps it running, and activity arriving now waits for the stop.
 */
export const lockIfIdle = (db: Executor, id: string, at: Date, unitMs: number) =>
  db
    .selectFrom('agents')
    .selectAll()
    .where('id', '=', id)
    .where(idleAt(at, unitMs))
    .forUpdate()
    .executeTakeFirst();
