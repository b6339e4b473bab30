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
