import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppProvider, ConnectionToken } from '@svc/contract';
import * as oidc from 'openid-client';
import type { Clock } from '../adapters/clock.js';
import { type TokenCipher, TokenCipherError } from '../crypto/token-cipher.js';
import type { Database } from '../db/database.js';
import type { AppConnectionRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Notices } from '../notices/notices.service.js';
import * as repo from './app-connections.repo.js';
import * as leases from './connection-tokens.repo.js';
import type { ProviderClient } from './oauth-client.js';
import { PROVIDERS } from './providers.js';
import { classifyRefreshError, describeProviderError } from './refresh-errors.js';
import { grantedScopes } from './scopes.js';
import { accessTokenLifetime, isFresh } from './token-freshness.js';

/** `code` tokens: the provider revokes them after a year unused. */
const CODE_TOKEN_LIFETIME_MS = 365 * 24 * 3600_000;
/** Beyond the refresh timeout, so a live holder never loses its lease. */
const LEASE_GRACE_MS = 5_000;
const POLL_MS = 50;

/**
 * Serializing refreshes. In front, an in-process map coalesces concurrent requests for one
 * connection into one promise. Behind it, a lease column in the connection's row serializes
 * processes. Why a lease and not `SELECT … FOR UPDATE`: a row lock must be held in an open
 * transaction for the whole provider call (up to 10 s), and on PGlite the one database session
 * would be blocked for every other request of the process meanwhile; a lease is taken and given
 * back by two short statements, and waiters in other processes poll the row.
 */
export function createConnectionTokens(deps: {
  database: Database;
  clock: Clock;
  cipher: TokenCipher;
  clients: Partial<Record<AppProvider, ProviderClient>>;
  log: Logger;
  metrics: Pick<Metrics, 'tokenRefresh'>;
  /** Told in the transaction that moves a connection to `error`. */
  notices: Pick<Notices, 'connectionFailed'>;
  refreshTimeoutMs: number;
}) {
  const { database, clock, cipher } = deps;
  const db = database.db;
  const inFlight = new Map<string, Promise<ConnectionToken>>();

  const binding = (row: Pick<AppConnectionRow, 'id' | 'provider'>) => ({
    connectionId: row.id,
    provider: row.provider,
  });
  const dead = () => new AppError('connection_error');
  /**
   * Moves the connection to `error` unless its refresh token changed meanwhile (a race), and
   * queues the notice in the same transaction. False when it was a race.
   */
  const markDead = (row: AppConnectionRow, usedRefreshToken: string | null) =>
    database.transaction(async (tx) => {
      const marked = await leases.markConnectionDead(tx, row.id, usedRefreshToken, clock.now());
      if (Number(marked.numUpdatedRows) === 0) return false;
      await deps.notices.connectionFailed(tx, row);
      return true;
    });
  const unavailable = (message: string) => new AppError('refresh_unavailable', { message });

  /** A token that no configured key opens is the platform's misconfiguration: 503, logged. */
  const open = (envelope: string, row: AppConnectionRow) => {
    try {
      return cipher.open(envelope, binding(row));
    } catch (error) {
      if (!(error instanceof TokenCipherError)) throw error;
      deps.log.error({ connectionId: row.id }, 'stored token does not open with ENCRYPTION_KEYS');
      throw unavailable('stored token does not open');
    }
  };

  const answer = (row: AppConnectionRow, expiresAt: Date): ConnectionToken => ({
    accessToken: open(row.accessToken, row),
    expiresAt: expiresAt.toISOString(),
    provider: row.provider,
    providerSubject: row.providerSubject,
    providerAccountId: row.providerAccountId,
    providerAccountName: row.providerAccountName,
    scopes: row.scopes,
  });

  /** One refresh attempt while holding the lease; `retry` when the race check says so. */
  async function refreshHolding(
    row: AppConnectionRow,
    owner: string,
  ): Promise<ConnectionToken | 'retry'> {
    const client = deps.clients[row.provider];
    if (!client) {
      await leases.releaseRefreshLease(db, row.id, owner, clock.now());
      throw unavailable(`provider ${row.provider} is not configured`);
    }
    if (row.refreshToken === null) {
      await markDead(row, null);
      throw dead();
    }
    const refreshToken = open(row.refreshToken, row);
    let tokens: oidc.TokenEndpointResponse;
    try {
      tokens = await oidc.refreshTokenGrant(client.oidc, refreshToken);
    } catch (error) {
      const failure = classifyRefreshError(error);
      const fields = {
        connectionId: row.id,
        provider: row.provider,
        ...describeProviderError(error),
      };
      if (failure === 'unavailable') {
        deps.metrics.tokenRefresh(row.provider, 'unavailable');
        deps.log.warn(fields, 'token refresh unavailable');
        await leases.releaseRefreshLease(db, row.id, owner, clock.now());
        throw unavailable('refresh failed');
      }
      // Race check: a changed refresh token means someone else refreshed; ours was stale.
      if (!(await markDead(row, row.refreshToken))) {
        deps.metrics.tokenRefresh(row.provider, 'stale');
        deps.log.info(fields, 'stale refresh token after a concurrent refresh; retrying');
        await leases.releaseRefreshLease(db, row.id, owner);
        return 'retry';
      }
      deps.metrics.tokenRefresh(row.provider, 'dead');
      deps.log.warn(fields, 'refresh token dead; connection set to error');
      throw dead();
    }
    const now = clock.now();
    const lifetime = accessTokenLifetime(tokens);
    const expiresAt = new Date(now.getTime() + lifetime.ms);
    // Rotated refresh tokens are stored before anyone is answered; a missing one keeps the old.
    const stored = await leases.storeRefreshedTokens(db, row.id, row.refreshToken, {
      accessToken: cipher.seal(tokens.access_token, binding(row)),
      refreshToken: cipher.seal(tokens.refresh_token ?? refreshToken, binding(row)),
      accessTokenExpiresAt: expiresAt,
      accessTokenLifetimeSeconds: lifetime.seconds,
      scopes: tokens.scope ? grantedScopes(row.provider, tokens.scope, row.scopes) : row.scopes,
      updatedAt: now,
    });
    if (!stored) throw dead(); // deleted (or re-authorized) meanwhile
    deps.metrics.tokenRefresh(row.provider, 'refreshed');
    deps.log.info({ connectionId: row.id, provider: row.provider }, 'token refreshed');
    return answer(stored, expiresAt);
  }

  /** Refreshes under the database lease, or waits for whoever holds it and takes their result. */
  async function refreshSerialized(id: string): Promise<ConnectionToken> {
    const owner = randomUUID();
    const startedAt = clock.now();
    const waitUntil = Date.now() + deps.refreshTimeoutMs + LEASE_GRACE_MS;
    for (;;) {
      const now = clock.now();
      const until = new Date(now.getTime() + deps.refreshTimeoutMs + LEASE_GRACE_MS);
      const held = await leases.takeRefreshLease(db, id, { owner, now, until });
      if (held) {
        // Re-check after taking it: another process may have refreshed just before.
        if (isFresh(held, clock.now())) {
          await leases.releaseRefreshLease(db, id, owner);
          return answer(held, held.accessTokenExpiresAt!);
        }
        let result: ConnectionToken | 'retry';
        try {
          result = await refreshHolding(held, owner);
        } catch (error) {
          // Whatever failed (a database fault, a key missing from ENCRYPTION_KEYS), the lease
          // must not stay held until it runs out. Guarded by owner: a no-op if already released.
          await leases.releaseRefreshLease(db, id, owner, clock.now()).catch(() => {});
          throw error;
        }
        if (result !== 'retry') return result;
        continue;
      }
      const row = await repo.findConnection(db, id);
      if (!row || row.status === 'error') throw dead();
      if (isFresh(row, clock.now())) return answer(row, row.accessTokenExpiresAt!);
      if (row.refreshFailedAt && row.refreshFailedAt >= startedAt) {
        throw unavailable('the concurrent refresh failed');
      }
      if (Date.now() > waitUntil) throw unavailable('timed out waiting for a concurrent refresh');
      await sleep(POLL_MS);
    }
  }

  return {
    /** The token of a connection the caller may use (checked by the caller). */
    async tokenFor(row: AppConnectionRow): Promise<ConnectionToken> {
      if (row.status === 'error') throw dead();
      if (!PROVIDERS[row.provider].refreshes) {
        const now = clock.now();
        await leases.touchTokenRequest(db, row.id, now);
        return answer(row, new Date(now.getTime() + CODE_TOKEN_LIFETIME_MS));
      }
      if (isFresh(row, clock.now())) return answer(row, row.accessTokenExpiresAt!);
      let pending = inFlight.get(row.id);
      if (!pending) {
        pending = refreshSerialized(row.id).finally(() => inFlight.delete(row.id));
        inFlight.set(row.id, pending);
      }
      return pending;
    },
  };
}

export type ConnectionTokens = ReturnType<typeof createConnectionTokens>;
