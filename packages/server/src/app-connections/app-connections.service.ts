import type { AppConnection, AppProvider, ConnectionToken } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { TokenCipher } from '../crypto/token-cipher.js';
import type { Database, Executor } from '../db/database.js';
import type { AppConnectionRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { AgentClaim } from '../http/app-env.js';
import type { Logger } from '../logger.js';
import * as repo from './app-connections.repo.js';
import type { ConnectionTokens } from './connection-tokens.js';
import type { ProviderClient } from './oauth-client.js';
import { revokeAtProvider } from './provider-api.js';
import { describeProviderError } from './refresh-errors.js';

/** Who asks: a signed-in user (any of their accounts) or an Agent (its account only). */
export type Caller = { readonly userId: string } | { readonly agentAccountId: string };

/** A token's caller may also be an Agent's unconfirmed claim, checked by the lookup itself. */
export type TokenCaller = Caller | { readonly agentClaim: AgentClaim };

export function createAppConnectionsService(deps: {
  database: Database;
  clock: Clock;
  membership: Membership;
  cipher: TokenCipher;
  clients: Partial<Record<AppProvider, ProviderClient>>;
  tokens: ConnectionTokens;
  log: Logger;
}) {
  const { database, clock, membership } = deps;
  const db = database.db;

  /** Not a member (or another account's Agent) → 404, never revealing that the id exists. */
  async function requireAccess(executor: Executor, caller: Caller, accountId: string) {
    if ('agentAccountId' in caller) {
      if (caller.agentAccountId !== accountId) throw new AppError('not_found');
      return;
    }
    await membership.requireMember(executor, { userId: caller.userId }, accountId);
  }

  const toConnection = (row: AppConnectionRow): AppConnection => ({
    id: row.id,
    accountId: row.accountId,
    provider: row.provider,
    status: row.status,
    scopes: row.scopes,
    providerSubject: row.providerSubject,
    providerAccountId: row.providerAccountId,
    providerAccountName: row.providerAccountName,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  });

  return {
    async list(caller: Caller, accountId?: string): Promise<AppConnection[]> {
      let accountIds: string[];
      if ('agentAccountId' in caller) {
        if (accountId && accountId !== caller.agentAccountId) throw new AppError('not_found');
        accountIds = [caller.agentAccountId];
      } else if (accountId) {
        accountIds = [(await membership.requireMember(db, caller, accountId)).account.id];
      } else {
        accountIds = await membership.memberAccountIds(db, caller.userId);
      }
      return (await repo.listConnections(db, accountIds)).map(toConnection);
    },

    /**
     * 410 for a deleted connection (its tombstone), 404 for one the caller cannot see. An
     * Agent's claim and the connection are checked by one statement: the cached token of a
     * fresh connection costs one round trip.
     */
    async token(caller: TokenCaller, id: string): Promise<ConnectionToken> {
      if ('agentClaim' in caller) {
        const found = await repo.findConnectionForAgent(db, id, caller.agentClaim);
        if (!found) throw new AppError('unauthorized');
        const { agentAccountId, ...row } = found;
        if (row.id === null) {
          const tombstone = await repo.findTombstone(db, id);
          if (tombstone?.accountId !== agentAccountId) throw new AppError('not_found');
          throw new AppError('connection_error', { message: 'connection was deleted' });
        }
        // The left join's columns are all set when its id is.
        return deps.tokens.tokenFor(row as AppConnectionRow);
      }
      const row = await repo.findConnection(db, id);
      if (!row) {
        const tombstone = await repo.findTombstone(db, id);
        if (!tombstone) throw new AppError('not_found');
        await requireAccess(db, caller, tombstone.accountId);
        throw new AppError('connection_error', { message: 'connection was deleted' });
      }
      await requireAccess(db, caller, row.accountId);
      return deps.tokens.tokenFor(row);
    },

    /**
     * Removes the connection (tombstone kept), then revokes at the provider, best effort: the
     * provider call is bounded by the refresh timeout and its failure is only logged. A grant
     * shared with another connection of the same provider account is not revoked, because
     * Google and GitHub grants end for every token of the pair.
     */
    async remove(userId: string, id: string): Promise<void> {
      const removed = await database.transaction(async (tx) => {
        const row = await repo.findConnection(tx, id);
        if (!row) throw new AppError('not_found');
        await membership.requireMember(tx, { userId }, row.accountId);
        await repo.deleteWithTombstone(tx, row, clock.now());
        return { row, shared: (await repo.countSameSubject(tx, row)) > 0 };
      });
      const { row, shared } = removed;
      const client = deps.clients[row.provider];
      if (!client || shared) return;
      try {
        const binding = { connectionId: row.id, provider: row.provider };
        const outcome = await revokeAtProvider(client, {
          accessToken: deps.cipher.open(row.accessToken, binding),
          refreshToken: row.refreshToken && deps.cipher.open(row.refreshToken, binding),
        });
        deps.log.info({ connectionId: id, provider: row.provider, outcome }, 'revocation');
      } catch (error) {
        deps.log.warn(
          { connectionId: id, provider: row.provider, ...describeProviderError(error) },
          'revocation failed; the connection is deleted anyway',
        );
      }
    },
  };
}

export type AppConnectionsService = ReturnType<typeof createAppConnectionsService>;
