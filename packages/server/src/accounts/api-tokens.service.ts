import { randomUUID } from 'node:crypto';
import { API_TOKEN_PREFIX, type ApiToken, type ApiTokenScope, type User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { accountAuditor } from './account-audit.js';
import { type Principal, pendingEmailChangeOf, toMemberships, toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import * as tokens from './api-tokens.repo.js';
import { hashSecret, newSecret } from './sessions.js';

const toApiToken = (row: {
  id: string;
  name: string;
  scope: ApiTokenScope;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}): ApiToken => ({
  id: row.id,
  name: row.name,
  scope: row.scope,
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt?.toISOString() ?? null,
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
});

/** Who a personal access token speaks for (with their memberships), and how far. */
export interface TokenPrincipal extends Principal {
  readonly tokenId: string;
  readonly scope: ApiTokenScope;
}

/**
 * Personal access tokens (`svcp_` + 256 random bits): shown once, stored as their SHA-256, act as
 * their user until they expire or are revoked. Creating and revoking one is recorded in the
 * user's personal account's audit log.
 */
export function createApiTokensService({ database, clock }: { database: Database; clock: Clock }) {
  const { db } = database;
  const audit = accountAuditor(clock);

  /** Token events go to the user's personal account's audit log. */
  async function auditToken(
    tx: Executor,
    user: User,
    action: 'token.create' | 'token.revoke',
    token: { id: string; name: string; scope: ApiTokenScope },
  ) {
    const accountId = await repo.findPersonalAccountId(tx, user.id);
    if (!accountId) throw new AppError('not_found', { message: 'user has no personal account' });
    await audit(tx, { userId: user.id }, accountId, action, token.id, {
      name: token.name,
      scope: token.scope,
    });
  }

  return {
    async create(
      user: User,
      input: { name: string; scope: ApiTokenScope; expiresAt?: string | undefined },
    ) {
      const now = clock.now();
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
      if (expiresAt && expiresAt <= now) {
        throw new AppError('invalid_request', {
          message: 'The expiry must be in the future',
          issues: [
            { path: ['body', 'expiresAt'], message: 'Pick a time in the future', code: 'custom' },
          ],
        });
      }
      const token = `${API_TOKEN_PREFIX}${newSecret()}`;
      return database.transaction(async (tx) => {
        const row = await tokens.insertApiToken(tx, {
          id: randomUUID(),
          userId: user.id,
          name: input.name,
          scope: input.scope,
          tokenHash: hashSecret(token),
          createdAt: now,
          expiresAt,
        });
        await auditToken(tx, user, 'token.create', row);
        return { ...toApiToken(row), token };
      });
    },

    async list(user: User): Promise<ApiToken[]> {
      return (await tokens.listUserApiTokens(db, user.id, clock.now())).map(toApiToken);
    },

    async revoke(user: User, id: string): Promise<void> {
      await database.transaction(async (tx) => {
        const row = await tokens.deleteUserApiToken(tx, user.id, id);
        if (!row) throw new AppError('not_found');
        await auditToken(tx, user, 'token.revoke', row);
      });
    },

    /** The principal behind `svcp_…`, or `undefined` (unknown, revoked, expired). */
    async authenticate(token: string): Promise<TokenPrincipal | undefined> {
      if (!token.startsWith(API_TOKEN_PREFIX)) return undefined;
      const row = await tokens.useApiToken(db, hashSecret(token), clock.now());
      return (
        row && {
          user: toUser(row),
          memberships: toMemberships(row.memberships),
          pendingEmailChange: pendingEmailChangeOf(row, clock.now()),
          tokenId: row.tokenId,
          scope: row.scope,
        }
      );
    },
  };
}

export type ApiTokensService = ReturnType<typeof createApiTokensService>;
