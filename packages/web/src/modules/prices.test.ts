import type { PriceBook, PriceCell } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { formatMoney, formatPeriod } from './format.js';
import { pricesFrom } from './prices.js';

// The locale is the reader's: the expectations are made with the same Intl as the code under test.
const euro = (units: number) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: 'EUR' }).format(units);

const cell = (over: Partial<PriceCell>): PriceCell => ({
  product: 'agent',
  size: 'small',
  region: 'eu',
  monthly: 1200,
  hourly: 2,
  legacyPausedHourly: 1,
  monthlyCap: 1440,
  ...over,
});

const book: PriceBook = {
  currency: 'EUR',
  minorUnitDigits: 2,
  prices: [
    cell({}),
    cell({ region: 'us', hourly: 3, monthlyCap: null }),
    cell({ product: 'plain_vm', monthly: 600, hourly: 1, legacyPausedHourly: null }),
  ],
  snapshotGbMonth: 1,
};

describe('formatMoney', () => {
  it('divides minor units by the currency’s digits, never rounding them away', () => {
    expect(formatMoney(1200, book)).toBe(euro(12));
    expect(formatMoney(2, book)).toBe(euro(0.02));
    expect(formatMoney(-1440, book)).toBe(euro(-14.4));
    expect(formatMoney(1234567, book)).toBe(euro(12345.67));
  });

  it('follows the currency: no minor digits for yen, three for dinar', () => {
    const yen = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'JPY' });
    expect(formatMoney(1500, { currency: 'JPY', minorUnitDigits: 0 })).toBe(yen.format(1500));
    const dinar = new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency: 'KWD',
      minimumFractionDigits: 3,
    });
    expect(formatMoney(1005, { currency: 'KWD', minorUnitDigits: 3 })).toBe(dinar.format(1.005));
  });
});

describe('formatPeriod', () => {
  it('names a month by its first and last day (the end is the next period’s start)', () => {
    const text = formatPeriod('2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z');
    expect(text).toContain('31');
    expect(text).not.toContain('Feb');
  });
});

describe('pricesFrom', () => {
  const prices = pricesFrom(book);

  it('finds one cell by product, size and region', () => {
    expect(prices.cell('agent', 'small', 'us')?.hourly).toBe(3);
    expect(prices.cell('plain_vm', 'small', 'eu')?.monthly).toBe(600);
    expect(prices.cell('plain_vm', 'large', 'eu')).toBeUndefined();
  });

  it('says a metered price with its cap when there is one, and a slot by the month', () => {
    const eu = prices.cell('agent', 'small', 'eu') as PriceCell;
    const us = prices.cell('agent', 'small', 'us') as PriceCell;
    expect(prices.metered(eu)).toBe(`${euro(0.02)}/hour, at most ${euro(14.4)}/month`);
    expect(prices.metered(us)).toBe(`${euro(0.03)}/hour`);
    expect(prices.slot(eu)).toBe(`${euro(12)}/month`);
  });

  it('gives a legacy Agent’s stopped hours their own rate', () => {
    const eu = prices.cell('agent', 'small', 'eu') as PriceCell;
    expect(prices.metered(eu, true)).toBe(
      `${euro(0.02)}/hour running, ${euro(0.01)}/hour stopped, at most ${euro(14.4)}/month`,
    );
    const vm = prices.cell('plain_vm', 'small', 'eu') as PriceCell;
    expect(prices.metered(vm, true)).toBe(`${euro(0.01)}/hour, at most ${euro(14.4)}/month`);
  });
});
