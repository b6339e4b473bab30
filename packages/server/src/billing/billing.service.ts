import type { Slot, Usage } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { monthStart } from './money.js';
import type { Prices } from './price-book.js';
import { listSlots, removeSlot } from './slots.js';
import { usageByResource } from './usage.js';

export function createBillingService({
  database,
  clock,
  membership,
  prices,
}: {
  database: Database;
  clock: Clock;
  membership: Membership;
  prices: Prices;
}) {
  return {
    async listSlots(userId: string, accountId: string): Promise<Slot[]> {
      await membership.requireMember(database.db, { userId }, accountId);
      const slots = await listSlots(database.db, accountId);
      return slots.map((slot) => ({
        ...slot,
        monthlyPrice: prices.cell(slot.product, slot.size, slot.region).monthly,
        createdAt: slot.createdAt.toISOString(),
      }));
    },

    /** This calendar month's usage so far, by machine (any member). */
    async usage(userId: string, accountId: string): Promise<Usage> {
      await membership.requireMember(database.db, { userId }, accountId);
      const asOf = clock.now();
      const periodStart = monthStart(asOf);
      const resources = await usageByResource(database.db, accountId, periodStart, asOf);
      return { periodStart: periodStart.toISOString(), asOf: asOf.toISOString(), resources };
    },

    /** Owners and admins remove free slots; a slot in use answers 409. */
    async removeSlot(userId: string, accountId: string, slotId: string): Promise<void> {
      await database.transaction(async (tx) => {
        await membership.requireManager(tx, { userId }, accountId);
        const outcome = await removeSlot(tx, accountId, slotId, clock.now());
        if (outcome === 'not_found') throw new AppError('not_found');
        if (outcome === 'in_use') throw new AppError('invalid_state', { message: 'slot in use' });
      });
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
