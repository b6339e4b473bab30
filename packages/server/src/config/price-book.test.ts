import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import defaultPrices from './default-prices.json' with { type: 'json' };
import { defaultPriceBook, parsePriceBook } from './price-book.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function priceFile(content: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-prices-'));
  dirs.push(dir);
  const file = path.join(dir, 'prices.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('the price book', () => {
  it('has every cell in the embedded default, with the minor unit of its currency', () => {
    const prices = defaultPriceBook();
    expect(prices.book).toMatchObject({ currency: 'EUR', minorUnitDigits: 2 });
    expect(prices.book.prices).toHaveLength(12);
    expect(prices.cell('agent', 'small', 'eu')).toMatchObject({ monthly: 1200, hourly: 2 });
    expect(prices.book.snapshotGbMonth).toBe(1);
    expect(loadConfig({}).config.billing.prices.book).toEqual(prices.book);
  });

  it('reads PRICES_FILE, and knows currencies with other minor units', async () => {
    const file = await priceFile({ ...defaultPrices, currency: 'jpy' });
    const { config } = loadConfig({ PRICES_FILE: file });
    expect(config.billing.prices.book).toMatchObject({ currency: 'JPY', minorUnitDigits: 0 });
  });

  it('refuses to start on a bad price file, listing every problem', async () => {
    const [first, second, ...rest] = defaultPrices.prices;
    const file = await priceFile({
      currency: 'EUX',
      prices: [
        { ...first, monthly: -5 },
        { ...second, hourly: 1.5 },
        // The last cell is missing; a plain VM with a legacy rate.
        ...rest.slice(0, -2),
        { ...rest.at(-2), legacyPausedHourly: 1 },
      ],
    });
    const problems = problemsOf({ PRICES_FILE: file });
    expect(problems).toEqual([
      'PRICES_FILE: currency: "EUX" is not an ISO 4217 currency code',
      'PRICES_FILE: snapshotGbMonth: missing (a GB of snapshot storage for a month, in minor units)',
      'PRICES_FILE: prices.0.monthly: not negative',
      'PRICES_FILE: prices.1.hourly: a whole number of minor units (cents), not a fraction',
      'PRICES_FILE: prices.10: plain_vm/large/us: legacyPausedHourly is for Agents only',
      'PRICES_FILE: prices: no price for plain_vm/large/eu',
    ]);
  });

  it('names a file it cannot read or parse, and a cell given twice', async () => {
    expect(problemsOf({ PRICES_FILE: '/nonexistent/prices.json' })).toEqual([
      'PRICES_FILE: cannot read /nonexistent/prices.json (ENOENT)',
    ]);
    expect(problemsOf({ PRICES_FILE: await priceFile('{"currency": ') })[0]).toMatch(
      /^PRICES_FILE: not JSON: /,
    );
    const twice = parsePriceBook(
      JSON.stringify({
        ...defaultPrices,
        prices: [...defaultPrices.prices, defaultPrices.prices[0]],
      }),
    );
    expect(twice).toEqual(['prices.12: agent/small/us appears twice']);
  });

  it('needs the snapshot storage price, a whole number of minor units', () => {
    const { snapshotGbMonth: _, ...without } = defaultPrices;
    expect(parsePriceBook(JSON.stringify(without))).toEqual([
      'snapshotGbMonth: missing (a GB of snapshot storage for a month, in minor units)',
    ]);
    // Beside a bad cell: each problem is reported.
    const prices = defaultPrices.prices.map((cell, index) =>
      index === 2 ? { ...cell, hourly: -1 } : cell,
    );
    expect(
      parsePriceBook(JSON.stringify({ ...defaultPrices, prices, snapshotGbMonth: 1.1 })),
    ).toEqual([
      'snapshotGbMonth: a whole number of minor units (cents), not a fraction',
      'prices.2.hourly: not negative',
    ]);
    const priced = parsePriceBook(JSON.stringify({ ...defaultPrices, snapshotGbMonth: 3 }));
    expect(Array.isArray(priced) ? priced : priced.book.snapshotGbMonth).toBe(3);
  });

  it('needs a legacy paused rate on every Agent cell', () => {
    const prices = defaultPrices.prices.map((cell, index) =>
      index === 0 ? { ...cell, legacyPausedHourly: null } : cell,
    );
    expect(parsePriceBook(JSON.stringify({ ...defaultPrices, prices }))).toEqual([
      "prices.0: agent/small/us needs legacyPausedHourly (a stopped legacy Agent's rate)",
    ]);
  });
});
