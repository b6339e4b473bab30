import type { PriceBook, PriceCell, Product, Region, Size } from '@svc/contract';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { pricesQuery } from '../api/queries/billing.js';
import { formatMoney } from './format.js';

/** The price book, read for the forms: one cell's prices, and amounts in its currency. */
export interface Prices {
  readonly book: PriceBook;
  cell(product: Product, size: Size, region: Region): PriceCell | undefined;
  money(amount: number): string;
  /**
   * `€0.02/hour, at most €14.40/month`: what a metered machine of the cell costs; a legacy
   * Agent's stopped hours have their own rate.
   */
  metered(cell: PriceCell, legacy?: boolean): string;
  /** `€12.00/month`: one subscription slot of the cell. */
  slot(cell: PriceCell): string;
}

export function pricesFrom(book: PriceBook): Prices {
  const money = (amount: number) => formatMoney(amount, book);
  return {
    book,
    cell: (product, size, region) =>
      book.prices.find((p) => p.product === product && p.size === size && p.region === region),
    money,
    metered: (cell, legacy = false) => {
      const stopped = legacy ? cell.legacyPausedHourly : null;
      const rate =
        stopped === null
          ? `${money(cell.hourly)}/hour`
          : `${money(cell.hourly)}/hour running, ${money(stopped)}/hour stopped`;
      return cell.monthlyCap === null ? rate : `${rate}, at most ${money(cell.monthlyCap)}/month`;
    },
    slot: (cell) => `${money(cell.monthly)}/month`,
  };
}

/** The price book (`GET /api/prices`); undefined until it is read, or if it cannot be. */
export function usePrices(): Prices | undefined {
  const book = useQuery(pricesQuery()).data;
  return useMemo(() => book && pricesFrom(book), [book]);
}
