import type { AgentState, BillingType } from '@svc/contract';
import { type Insertable, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { AgentsTable } from '../db/schema.js';

export const insertAgent = (db: Executor, agent: Insertable<AgentsTable>) =>
  db.insertInto('agents').values(agent).returningAll().executeTakeFirstOrThrow();

/** Reasons for `error` after which an Agent has no server (provisioning never finished). */
export const SERVERLESS_ERRORS = ['provisioning_timeout', 'provisioning_failed'];

/** Which of these ids belong to Agents that should have a server. */
export const idsOwningServers = async (db: Executor, ids: readonly string[]) =>
  ids.length === 0
    ? []
    : (
        await db
          .selectFrom('agents')
          .select('id')
          .where('id', 'in', ids)
          .where((eb) =>
            eb.or([eb('state', '!=', 'error'), eb('statusReason', 'not in', SERVERLESS_ERRORS)]),
          )
          .execute()
      ).map((r) => r.id);

/** Agents left in `state` since before `cutoff` (their job died): moved to `error`. */
export const failStuck = (
  db: Executor,
  state: AgentState,
  reason: string,
  cutoff: Date,
  at: Date,
) =>
  db
    .updateTable('agents')
    .set({ state: 'error', statusReason: reason, updatedAt: at })
    .where('state', '=', state)
    .where('updatedAt', '<', cutoff)
    .returningAll()
    .execute();

export const findAgent = (db: Executor, id: string) =>
  db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();

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

/**
 * The compare-and-set every state change goes through: moves the Agent to `to` only if it is in
 * one of `from` right now. `undefined` means it was not (someone else moved it first).
 */
export const transitionAgent = (
  db: Executor,
  id: string,
  change: {
    from: readonly AgentState[];
    to: AgentState;
    at: Date;
    statusReason?: string | null;
    /** Refuse while the Agent's disk is being copied for a clone. */
    notCloning?: boolean;
    /** Invalidate every token issued so far (destroy). */
    revokeTokens?: boolean;
  },
) => {
  let query = db
    .updateTable('agents')
    .set({
      state: change.to,
      updatedAt: change.at,
      statusReason: change.statusReason ?? null,
      ...(change.to !== 'provisioning' && { provisionDeadlineAt: null }),
      ...(change.revokeTokens && { tokenGen: sql<number>`token_gen + 1` }),
    })
    .where('id', '=', id)
    .where('state', 'in', change.from);
  if (change.notCloning) query = query.where('cloningBy', 'is', null);
  return query.returningAll().executeTakeFirst();
};

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

/** Removes a destroyed Agent, only from `destroying`. */
export const removeAgent = (db: Executor, id: string) =>
  db
    .deleteFrom('agents')
    .where('id', '=', id)
    .where('state', '=', 'destroying')
    .returningAll()
    .executeTakeFirst();

/** Changes billing only while running or stopped and still on `from` (guarded like a move). */
export const switchBilling = (
  db: Executor,
  id: string,
  change: { from: BillingType; to: BillingType; slotId: string | null; at: Date },
) =>
  db
    .updateTable('agents')
    .set({ billingType: change.to, slotId: change.slotId, updatedAt: change.at })
    .where('id', '=', id)
    .where('state', 'in', ['running', 'stopped'])
    .where('billingType', '=', change.from)
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
    .where('state', 'in', ['running', 'stopped'])
    .where('cloningBy', 'is', null)
    .returningAll()
    .executeTakeFirst();

/** The clone's disk is copied (or never will be): its source is free again. */
export const releaseCloneSource = (db: Executor, cloneId: string) =>
  db.updateTable('agents').set({ cloningBy: null }).where('cloningBy', '=', cloneId).execute();

/** Moves the Agent to another account, metered and without a slot, if running or stopped. */
export const moveToAccount = (db: Executor, id: string, accountId: string, at: Date) =>
  db
    .updateTable('agents')
    .set({ accountId, billingType: 'metered', slotId: null, updatedAt: at })
    .where('id', '=', id)
    .where('state', 'in', ['running', 'stopped'])
    .returningAll()
    .executeTakeFirst();
