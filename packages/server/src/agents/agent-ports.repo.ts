import type { PortShare } from '@svc/contract';
import type { Executor } from '../db/database.js';

export const listSharedPorts = (db: Executor, agentId: string) =>
  db
    .selectFrom('agentPorts')
    .select(['port', 'share'])
    .where('agentId', '=', agentId)
    .orderBy('port')
    .execute();

export const findSharedPort = (db: Executor, agentId: string, port: number) =>
  db
    .selectFrom('agentPorts')
    .select(['port', 'share'])
    .where('agentId', '=', agentId)
    .where('port', '=', port)
    .executeTakeFirst();

/** How many ports the Agent shares. */
export const countSharedPorts = async (db: Executor, agentId: string) =>
  Number(
    (
      await db
        .selectFrom('agentPorts')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('agentId', '=', agentId)
        .executeTakeFirstOrThrow()
    ).count,
  );

export const upsertSharedPort = (
  db: Executor,
  agentId: string,
  port: number,
  share: PortShare,
  at: Date,
) =>
  db
    .insertInto('agentPorts')
    .values({ agentId, port, share, createdAt: at, updatedAt: at })
    .onConflict((oc) => oc.columns(['agentId', 'port']).doUpdateSet({ share, updatedAt: at }))
    .execute();

export const deleteSharedPort = async (db: Executor, agentId: string, port: number) =>
  (
    await db
      .deleteFrom('agentPorts')
      .where('agentId', '=', agentId)
      .where('port', '=', port)
      .executeTakeFirst()
  ).numDeletedRows > 0n;

/** The port's share level and its Agent's account, for the edge; `undefined`: not shared. */
export const findPortAccess = (db: Executor, agentId: string, port: number) =>
  db
    .selectFrom('agentPorts')
    .innerJoin('agents', 'agents.id', 'agentPorts.agentId')
    .select(['agentPorts.share', 'agents.accountId'])
    .where('agentPorts.agentId', '=', agentId)
    .where('agentPorts.port', '=', port)
    .executeTakeFirst();

/**
 * Spends a ticket's nonce: `true` the first time, `false` when it was spent before. Spent nonces
 * that have expired are dropped on the way (a ticket past its expiry is refused anyway).
 */
export async function spendPortTicket(db: Executor, nonce: string, expiresAt: Date, now: Date) {
  await db.deleteFrom('agentPortTickets').where('expiresAt', '<=', now).execute();
  const inserted = await db
    .insertInto('agentPortTickets')
    .values({ nonce, expiresAt })
    .onConflict((oc) => oc.column('nonce').doNothing())
    .returning('nonce')
    .executeTakeFirst();
  return inserted !== undefined;
}
