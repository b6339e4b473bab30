import type { Executor } from '../db/database.js';
import type { SlotQuantity } from './payment-processor.js';
import type { Prices } from './price-book.js';

/** The account's slots held now, counted per cell, with each cell's monthly price. */
export async function slotQuantities(
  db: Executor,
  accountId: string,
  prices: Prices,
): Promise<SlotQuantity[]> {
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
  return rows.map((row) => ({
    product: row.product,
    size: row.size,
    region: row.region,
    quantity: Number(row.quantity),
    monthly: prices.cell(row.product, row.size, row.region).monthly,
  }));
}
