import { randomUUID } from 'node:crypto';
import type { VaultEntry } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { parsePublicKey } from './public-key.js';
import * as repo from './vault.repo.js';

export function createVaultService(deps: {
  database: Database;
  clock: Clock;
  membership: Membership;
}) {
  const { database, clock, membership } = deps;
  const toEntry = (row: Awaited<ReturnType<typeof repo.listEntries>>[number]): VaultEntry => ({
    ...row,
    createdAt: row.createdAt.toISOString(),
  });

  return {
    async add(
      userId: string,
      input: { label: string; value: string; accountId?: string },
    ): Promise<VaultEntry> {
      const parsed = parsePublicKey(input.value);
      if (!parsed.ok) {
        throw new AppError('invalid_public_key', {
          issues: [{ path: ['body', 'value'], message: parsed.reason, code: 'invalid_public_key' }],
        });
      }
      return database.transaction(async (tx) => {
        const account = await membership.resolveTargetAccount(tx, userId, input.accountId);
        const row = await repo.insertEntry(tx, {
          id: randomUUID(),
          accountId: account.id,
          label: input.label,
          type: parsed.key.type,
          publicKey: parsed.key.canonical,
          fingerprintSha256: parsed.key.fingerprintSha256,
          createdAt: clock.now(),
        });
        if (!row) throw new AppError('duplicate_key');
        return toEntry(row);
      });
    },

    async list(userId: string, accountId?: string): Promise<VaultEntry[]> {
      const accountIds = accountId
        ? [(await membership.requireMember(database.db, { userId }, accountId)).account.id]
        : await membership.memberAccountIds(database.db, userId);
      return (await repo.listEntries(database.db, accountIds)).map(toEntry);
    },

    async remove(userId: string, entryId: string): Promise<void> {
      await database.transaction(async (tx) => {
        const entry = await repo.findEntry(tx, entryId);
        if (!entry) throw new AppError('not_found');
        await membership.requireMember(tx, { userId }, entry.accountId);
        await repo.deleteEntry(tx, entryId);
      });
    },
  };
}

export type VaultService = ReturnType<typeof createVaultService>;
