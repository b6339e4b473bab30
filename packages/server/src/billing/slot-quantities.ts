import type { Prices } from '../config/price-book.js';
import type { Executor } from '../db/database.js';
import type { SlotQuantity } from './payment-processor.js';
import { heldSlotCounts } from './slots.repo.js';

/** The account's slots held now, counted per cell, with each cell's monthly price. */
export async function slotQuantities(
  db: Executor,
  accountId: string,
  prices: Prices,
): Promise<SlotQuantity[]> {
  const cells = await heldSlotCounts(db, accountId);
  return cells.map((cell) => ({
    ...cell,
    monthly: prices.cell(cell.product, cell.size, cell.region).monthly,
  }));
}
