import type { Product, Region, Size } from '@svc/contract';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

export interface SlotKind {
  readonly accountId: string;
  readonly product: Product;
  readonly size: Size;
  readonly region: Region;
}

/** Whether an Agent or a Plain VM occupies slot `s`. */
const occupied = sql<boolean>`(exists (select 1 from agents a where a.slot_id = s.id)
  or exists (select 1 from plain_vms v where v.slot_id = s.id))`;

/** Locks the account's row: slot takers of one account queue on it. */
export async function lockSlotTakers(tx: Executor, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** The oldest free slot of this kind, locked (one another taker holds is skipped). */
export const takeFreeSlot = (tx: Executor, kind: SlotKind) =>
  tx
    .selectFrom('subscriptionSlots as s')
    .select('s.id')
    .where('s.accountId', '=', kind.accountId)
    .where('s.product', '=', kind.product)
    .where('s.size', '=', kind.size)
    .where('s.region', '=', kind.region)
    .where('s.removedAt', 'is', null)
    .where(sql<boolean>`not ${occupied}`)
    .orderBy('s.createdAt')
    .orderBy('s.id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();

export async function insertSlot(tx: Executor, slotId: string, kind: SlotKind, at: Date) {
  await tx
    .insertInto('subscriptionSlots')
    .values({ id: slotId, ...kind, createdAt: at })
    .execute();
}

export const listSlots = (db: Executor, accountId: string) =>
  db
    .selectFrom('subscriptionSlots as s')
    .select(['s.id', 's.product', 's.size', 's.region', 's.createdAt', occupied.as('inUse')])
    .where('s.accountId', '=', accountId)
    .where('s.removedAt', 'is', null)
    .orderBy('s.createdAt')
    .orderBy('s.id')
    .execute();

/** The account's held slot, locked, with whether it is in use. */
export const lockHeldSlot = (tx: Executor, accountId: string, slotId: string) =>
  tx
    .selectFrom('subscriptionSlots as s')
    .select(['s.id', occupied.as('inUse')])
    .where('s.id', '=', slotId)
    .where('s.accountId', '=', accountId)
    .where('s.removedAt', 'is', null)
    .forUpdate()
    .executeTakeFirst();

export async function markSlotRemoved(tx: Executor, slotId: string, at: Date): Promise<void> {
  await tx
    .updateTable('subscriptionSlots')
    .set({ removedAt: at })
    .where('id', '=', slotId)
    .execute();
}

/** The account's slots held now, counted per cell. */
export async function heldSlotCounts(db: Executor, accountId: string) {
  const rows = await db
    .selectFrom('subscriptionSlots')
    .select(['product', 'size', 'region', (eb) => eb.fn.countAll<string>().as('quantity')])
    .where('accountId', '=', accountId)
    .where('removedAt', 'is', null)
    .groupBy(['product', 'size', 'region'])
    .orderBy('product')
    .orderBy('size')
    .orderBy('region')
    .execute();
  return rows.map((row) => ({ ...row, quantity: Number(row.quantity) }));
}
