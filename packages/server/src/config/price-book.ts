import {
  type PriceBook,
  type PriceCell,
  type Product,
  Region,
  type Region as RegionName,
  Size,
  type Size as SizeName,
} from '@svc/contract';
import { z } from 'zod';
import defaultPrices from './default-prices.json' with { type: 'json' };

const PRODUCTS: readonly Product[] = ['agent', 'plain_vm'];

/** A whole, non-negative number of minor units (cents): the file's only kind of amount. */
const MinorUnits = z
  .number({ error: 'a whole number of minor units (cents)' })
  .int('a whole number of minor units (cents), not a fraction')
  .nonnegative('not negative');

const PriceFileCell = z.strictObject({
  product: z.enum(['agent', 'plain_vm']),
  size: Size,
  region: Region,
  monthly: MinorUnits,
  hourly: MinorUnits,
  /** Agents only: a stopped legacy-cohort Agent's hourly rate. */
  legacyPausedHourly: MinorUnits.nullable().optional(),
  monthlyCap: MinorUnits.nullable().optional(),
});

const CellAddress = z.object({
  product: z.enum(['agent', 'plain_vm']),
  size: Size,
  region: Region,
});

const PriceFile = z.strictObject({
  currency: z.string({ error: 'an ISO 4217 code such as "EUR"' }),
  prices: z.array(z.unknown(), { error: 'a list of cells' }),
  // Checked apart (below), so that a problem with it hides none of the cells'.
  snapshotGbMonth: z.unknown().optional(),
});

/** The price book's cells by product, size and region. */
export type PriceIndex = ReadonlyMap<string, PriceCell>;

export const cellKey = (cell: { product: Product; size: SizeName; region: RegionName }) =>
  `${cell.product}/${cell.size}/${cell.region}`;

/** The loaded price book and its cells by key. */
export interface Prices {
  readonly book: PriceBook;
  /** The cell of a product, size and region: every one exists (the loader checks). */
  cell(product: Product, size: SizeName, region: RegionName): PriceCell;
}

/**
 * Parses a price file (`PRICES_FILE`, JSON): every cell (product × size × region) exactly once,
 * the snapshot storage price (`snapshotGbMonth`), amounts as whole non-negative minor units, a
 * currency ISO 4217 knows. Returns the prices, or
 * every problem found, each a sentence naming where it is.
 */
export function parsePriceBook(text: string): Prices | string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return [`not JSON: ${(error as Error).message}`];
  }
  const parsed = PriceFile.safeParse(json);
  if (!parsed.success) return issuesOf(parsed.error);
  const problems: string[] = [];
  const currency = parsed.data.currency.toUpperCase();
  const minorUnitDigits = minorUnitDigitsOf(currency);
  if (minorUnitDigits === undefined) {
    problems.push(`currency: "${parsed.data.currency}" is not an ISO 4217 currency code`);
  }
  // Required like every cell: a file written for another currency must not inherit a price in
  // the embedded book's euros.
  const snapshotGbMonth = MinorUnits.safeParse(parsed.data.snapshotGbMonth);
  if (parsed.data.snapshotGbMonth === undefined) {
    problems.push(
      'snapshotGbMonth: missing (a GB of snapshot storage for a month, in minor units)',
    );
  } else if (!snapshotGbMonth.success) {
    problems.push(...issuesOf(snapshotGbMonth.error, 'snapshotGbMonth'));
  }
  // Cell by cell, so one bad cell hides no problem of another.
  const cells = new Map<string, PriceCell>();
  const seen = new Set<string>();
  for (const [index, raw] of parsed.data.prices.entries()) {
    const where = `prices.${index}`;
    const result = PriceFileCell.safeParse(raw);
    if (!result.success) {
      problems.push(...issuesOf(result.error, where));
      // A bad cell still says which it is: it is not also reported missing.
      const known = CellAddress.safeParse(raw);
      if (known.success) seen.add(cellKey(known.data));
      continue;
    }
    const cell = result.data;
    const key = cellKey(cell);
    if (seen.has(key)) problems.push(`${where}: ${key} appears twice`);
    seen.add(key);
    if (cell.product === 'agent' && cell.legacyPausedHourly == null) {
      problems.push(`${where}: ${key} needs legacyPausedHourly (a stopped legacy Agent's rate)`);
    }
    if (cell.product === 'plain_vm' && cell.legacyPausedHourly != null) {
      problems.push(`${where}: ${key}: legacyPausedHourly is for Agents only`);
    }
    cells.set(key, {
      ...cell,
      legacyPausedHourly: cell.legacyPausedHourly ?? null,
      monthlyCap: cell.monthlyCap ?? null,
    });
  }
  for (const product of PRODUCTS) {
    for (const size of Size.options) {
      for (const region of Region.options) {
        const key = cellKey({ product, size, region });
        if (!seen.has(key)) problems.push(`prices: no price for ${key}`);
      }
    }
  }
  if (problems.length > 0 || minorUnitDigits === undefined || !snapshotGbMonth.success) {
    return problems;
  }
  const book: PriceBook = {
    currency,
    minorUnitDigits,
    prices: [...cells.values()],
    snapshotGbMonth: snapshotGbMonth.data,
  };
  return {
    book,
    cell: (product, size, region) => cells.get(cellKey({ product, size, region })) as PriceCell,
  };
}

/** The embedded price book (`src/billing/default-prices.json`), used when PRICES_FILE is unset. */
export function defaultPriceBook(): Prices {
  const prices = parsePriceBook(JSON.stringify(defaultPrices));
  if (Array.isArray(prices)) throw new Error(`default-prices.json: ${prices.join('; ')}`);
  return prices;
}

/** Zod's issues as `path: message` sentences, under `prefix`. */
const issuesOf = (error: z.ZodError, prefix?: string) =>
  error.issues.map(
    (issue) =>
      `${[prefix, ...issue.path].filter((p) => p !== undefined).join('.') || '(file)'}: ${issue.message}`,
  );

/** How many digits the currency's minor unit has (2 for EUR, 0 for JPY); undefined if unknown. */
function minorUnitDigitsOf(currency: string): number | undefined {
  if (!/^[A-Z]{3}$/.test(currency) || !Intl.supportedValuesOf('currency').includes(currency)) {
    return undefined;
  }
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
    .maximumFractionDigits;
}
