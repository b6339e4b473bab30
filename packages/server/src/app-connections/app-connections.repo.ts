import type { Insertable } from 'kysely';
import { SILENT_AGENT_STATE } from '../agents/agent-token.js';
import type { Executor } from '../db/database.js';
import type {
  AppAuthorizationStatesTable,
  AppConnectionRow,
  AppConnectionsTable,
} from '../db/schema.js';
import type { AgentClaim } from '../http/app-env.js';

export const insertState = (db: Executor, state: Insertable<AppAuthorizationStatesTable>) =>
  db.insertInto('appAuthorizationStates').values(state).execute();

/**
 * Consumes a state in one statement, so of two callbacks with the same state exactly one gets
 * the row. An expired state is consumed too, and reported as such by the caller.
 */
export const consumeState = (db: Executor, stateHash: string) =>
  db
    .deleteFrom('appAuthorizationStates')
    .where('stateHash', '=', stateHash)
    .returningAll()
    .executeTakeFirst();

export const deleteExpiredStates = (db: Executor, now: Date) =>
  db.deleteFrom('appAuthorizationStates').where('expiresAt', '<', now).execute();

export const findConnection = (db: Executor, id: string) =>
  db.selectFrom('appConnections').selectAll().where('id', '=', id).executeTakeFirst();

/**
 * The connection `id` as the Agent a token claims may see it, in one statement: no row when the
 * claim is not the Agent's current generation or the Agent no longer speaks (the token is
 * refused); a row without a connection (`id` null) when its account has no such connection.
 */
export const findConnectionForAgent = (db: Executor, id: string, claim: AgentClaim) =>
  db
    .selectFrom('agents as a')
    .leftJoin('appConnections as c', (join) =>
      join.on('c.id', '=', id).onRef('c.accountId', '=', 'a.accountId'),
    )
    .selectAll('c')
    .select('a.accountId as agentAccountId')
    .where('a.id', '=', claim.agentId)
    .where('a.tokenGen', '=', claim.gen)
    .where('a.state', '<>', SILENT_AGENT_STATE)
    .executeTakeFirst();

export const findConnectionBySubject = (
  db: Executor,
  key: { accountId: string; provider: string; providerSubject: string },
) =>
  db
    .selectFrom('appConnections')
    .selectAll()
    .where('accountId', '=', key.accountId)
    .where('provider', '=', key.provider as AppConnectionRow['provider'])
    .where('providerSubject', '=', key.providerSubject)
    .executeTakeFirst();

/** Other connections backed by the same provider account (a shared grant at the provider). */
export const countSameSubject = async (db: Executor, row: AppConnectionRow) =>
  Number(
    (
      await db
        .selectFrom('appConnections')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('provider', '=', row.provider)
        .where('providerSubject', '=', row.providerSubject)
        .where('id', '<>', row.id)
        .executeTakeFirstOrThrow()
    ).n,
  );

/**
 * Inserts, or replaces the tokens, scopes and names of the connection of the same provider
 * account and sets it active. Returns the row's id: the existing one on conflict.
 */
export const upsertConnection = (db: Executor, row: Insertable<AppConnectionsTable>) =>
  db
    .insertInto('appConnections')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['accountId', 'provider', 'providerSubject']).doUpdateSet({
        status: 'active',
        scopes: row.scopes,
        providerAccountId: row.providerAccountId,
        providerAccountName: row.providerAccountName,
        refreshToken: row.refreshToken ?? null,
        accessToken: row.accessToken,
        accessTokenExpiresAt: row.accessTokenExpiresAt ?? null,
        accessTokenLifetimeSeconds: row.accessTokenLifetimeSeconds ?? null,
        tokenRequestedAt: null,
        refreshLeaseOwner: null,
        refreshLeaseUntil: null,
        refreshFailedAt: null,
        updatedAt: row.updatedAt as Date,
      }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();

export const listConnections = (db: Executor, accountIds: readonly string[]) =>
  accountIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('appConnections')
        .selectAll()
        .where('accountId', 'in', accountIds)
        .orderBy('createdAt')
        .orderBy('id')
        .execute();

/** Deletes the row and keeps a tombstone, so its token endpoint can answer 410. */
export async function deleteWithTombstone(db: Executor, row: AppConnectionRow, now: Date) {
  await db.deleteFrom('appConnections').where('id', '=', row.id).execute();
  await db
    .insertInto('appConnectionTombstones')
    .values({ id: row.id, accountId: row.accountId, deletedAt: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export const findTombstone = (db: Executor, id: string) =>
  db.selectFrom('appConnectionTombstones').selectAll().where('id', '=', id).executeTakeFirst();

/** Every row's sealed tokens, for re-encryption. */
export const listSealedTokens = (db: Executor) =>
  db
    .selectFrom('appConnections')
    .select(['id', 'provider', 'accessToken', 'refreshToken'])
    .orderBy('id')
    .execute();

/** Writes re-sealed tokens only if nobody changed them since they were read. */
export const replaceSealedTokens = (
  db: Executor,
  row: { id: string; accessToken: string; refreshToken: string | null },
  next: { accessToken: string; refreshToken: string | null },
) =>
  db
    .updateTable('appConnections')
    .set(next)
    .where('id', '=', row.id)
    .where('accessToken', '=', row.accessToken)
    .where((eb) =>
      row.refreshToken === null
        ? eb('refreshToken', 'is', null)
        : eb('refreshToken', '=', row.refreshToken),
    )
    .executeTakeFirst();
