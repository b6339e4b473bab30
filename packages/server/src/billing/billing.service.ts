import type { Slot } from '@svc/contract';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { listSlots, removeSlot } from './slots.js';

export function createBillingService({
  database,
  accounts,
}: {
  database: Database;
  accounts: AccountsService;
}) {
  return {
    async listSlots(userId: string, accountId: string): Promise<Slot[]> {
      await accounts.requireMember(database.db, { userId }, accountId);
      const slots = await listSlots(database.db, accountId);
      return slots.map((slot) => ({ ...slot, createdAt: slot.createdAt.toISOString() }));
    },

    /** Owners and admins remove free slots; a slot in use answers 409. */
    async removeSlot(userId: string, accountId: string, slotId: string): Promise<void> {
      await database.transaction(async (tx) => {
        await accounts.requireMember(tx, { userId }, accountId, ['owner', 'admin']);
        const outcome = await removeSlot(tx, accountId, slotId);
        if (outcome === 'not_found') throw new AppError('not_found');
        if (outcome === 'in_use') throw new AppError('invalid_state', { message: 'slot in use' });
      });
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
