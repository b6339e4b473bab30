import { type Cohort, type MachineState, SIZE_ORDER, type Size } from '@svc/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultPriceBook, type Prices } from '../config/price-book.js';
import {
  type BilledPeriod,
  billLines,
  divideRoundingHalfUp,
  type HeldSlot,
  monthStart,
  nextMonthStart,
  totalOf,
} from './money.js';

const prices: Prices = defaultPriceBook();
const ACCOUNTS = ['a', 'b', 'c'] as const;
const STATES: readonly MachineState[] = [
  'provisioning',
  'running',
  'stopping',
  'stopped',
  'starting',
  'restarting',
  'destroying',
  'error',
];
/** Which rate each state is charged at, written out here apart from the code under test. */
const EXPECTED_RATE: Partial<Record<MachineState, 'running' | 'paused'>> = {
  running: 'running',
  stopping: 'running',
  starting: 'running',
  restarting: 'running',
  stopped: 'paused',
};

/** One thing that happens to a machine, `afterMs` after the previous one. */
type Change =
  | { afterMs: number; kind: 'state'; state: MachineState }
  | { afterMs: number; kind: 'billing'; billingType: 'metered' | 'subscription' }
  | { afterMs: number; kind: 'transfer'; account: (typeof ACCOUNTS)[number] }
  // A resize only grows a machine (a disk never shrinks): to this size if larger.
  | { afterMs: number; kind: 'resize'; size: Size };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    afterMs: fc.integer({ min: 0, max: 9_000_000 }),
    kind: fc.constant('state' as const),
    state: fc.constantFrom(...STATES),
  }),
  fc.record({
    afterMs: fc.integer({ min: 0, max: 9_000_000 }),
    kind: fc.constant('billing' as const),
    billingType: fc.constantFrom('metered' as const, 'subscription' as const),
  }),
  fc.record({
    afterMs: fc.integer({ min: 0, max: 9_000_000 }),
    kind: fc.constant('transfer' as const),
    account: fc.constantFrom(...ACCOUNTS),
  }),
  fc.record({
    afterMs: fc.integer({ min: 0, max: 9_000_000 }),
    kind: fc.constant('resize' as const),
    size: fc.constantFrom(...SIZE_ORDER),
  }),
);

const machine = fc.record({
  kind: fc.constantFrom('agent' as const, 'plain_vm' as const),
  size: fc.constantFrom('small' as const, 'medium' as const, 'large' as const),
  region: fc.constantFrom('us' as const, 'eu' as const),
  cohort: fc.constantFrom('current' as const, 'legacy' as const),
  // Starts shortly before a month's end, so lives cross month boundaries.
  startOffsetMs: fc.integer({ min: 0, max: 20_000_000 }),
  changes: fc.array(change, { maxLength: 40 }),
  destroyed: fc.boolean(),
});

type Machine = typeof machine extends fc.Arbitrary<infer M> ? M : never;

interface Status {
  account: string;
  size: Size;
  state: MachineState;
  billingType: 'metered' | 'subscription';
}

/** The ledger the service keeps for the machine: one period per status, end to start. */
function simulate(m: Machine, id: string) {
  const cohort: Cohort = m.kind === 'agent' ? m.cohort : 'current';
  const born = new Date(Date.UTC(2026, 0, 31, 20) + m.startOffsetMs);
  let status: Status = {
    account: 'a',
    size: m.size,
    state: 'provisioning',
    billingType: 'metered',
  };
  let at = born.getTime();
  const events: { at: number; status: Status }[] = [{ at, status }];
  for (const c of m.changes) {
    at += c.afterMs;
    status =
      c.kind === 'state'
        ? { ...status, state: c.state }
        : c.kind === 'billing'
          ? { ...status, billingType: c.billingType }
          : c.kind === 'resize'
            ? { ...status, size: larger(status.size, c.size) }
            : // A transfer lands metered, as the service moves machines.
              { ...status, account: c.account, billingType: 'metered' };
    events.push({ at, status });
  }
  const end = at + 1_234;
  const periods: (BilledPeriod & { accountId: string })[] = events.map((event, index) => {
    const next = events[index + 1];
    return {
      resourceKind: m.kind,
      resourceId: id,
      name: 'm',
      accountId: event.status.account,
      state: event.status.state,
      billingType: event.status.billingType,
      size: event.status.size,
      region: m.region,
      cohort,
      startedAt: new Date(event.at),
      endedAt: next ? new Date(next.at) : m.destroyed ? new Date(end) : null,
    };
  });
  return { periods, events, born: born.getTime(), end, cohort };
}

/**
 * The oracle: the seconds charged per account and rate, counted one second at a time. A second
 * belongs to the status that holds when it ends (the last change made within or before it).
 */
function chargedSeconds(events: readonly { at: number; status: Status }[], end: number) {
  const counts = new Map<string, number>();
  const first = Math.floor((events[0] as { at: number }).at / 1000);
  let index = 0;
  for (let s = first; s < Math.floor(end / 1000); s++) {
    while (
      index + 1 < events.length &&
      Math.floor((events[index + 1] as { at: number }).at / 1000) <= s
    ) {
      index++;
    }
    const { status } = events[index] as { status: Status };
    const rate = EXPECTED_RATE[status.state];
    if (!rate || status.billingType !== 'metered') continue;
    const key = `${status.account}/${rate}/${status.size}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const larger = (a: Size, b: Size): Size => (SIZE_ORDER.indexOf(b) > SIZE_ORDER.indexOf(a) ? b : a);

/** Every calendar month `[from, to)` touches. */
function monthsBetween(from: number, to: number): Date[] {
  const months: Date[] = [];
  for (let m = monthStart(new Date(from)); m.getTime() < to; m = nextMonthStart(m)) months.push(m);
  return months;
}

describe('the money of a bill', () => {
  it('charges every second of a machine’s billed life exactly once, to the right account, at the right rate', () => {
    fc.assert(
      fc.property(machine, (m) => {
        const { periods, events, born, end, cohort } = simulate(
          m,
          '00000000-0000-4000-8000-000000000001',
        );
        const expected = chargedSeconds(events, end);
        const asOf = new Date(end);
        const billed = new Map<string, number>();
        for (const account of ACCOUNTS) {
          const own = periods.filter((p) => p.accountId === account);
          for (const periodStart of monthsBetween(born, end)) {
            const periodEnd = nextMonthStart(periodStart);
            const window = {
              periodStart,
              periodEnd,
              asOf: asOf < periodEnd ? asOf : periodEnd,
            };
            const lines = billLines(prices, window, own, []);
            let metered = 0;
            const meteredLines = lines.filter((l) => l.kind === 'metered');
            // The cap is the size the machine ended the window at: its largest (sizes only grow).
            const cell = prices.cell(
              m.kind,
              meteredLines.map((l) => l.size).reduce(larger, 'small'),
              m.region,
            );
            for (const line of meteredLines) {
              const lineCell = prices.cell(m.kind, line.size, m.region);
              const key = `${account}/${line.rate}/${line.size}`;
              billed.set(key, (billed.get(key) ?? 0) + line.seconds);
              const hourly =
                line.rate === 'paused' && cohort === 'legacy'
                  ? (lineCell.legacyPausedHourly as number)
                  : lineCell.hourly;
              expect(line.unitAmount).toBe(hourly);
              expect(line.amount).toBe(Math.floor((line.seconds * hourly) / 3600 + 0.5));
              metered += line.amount;
            }
            const cap = lines.find((l) => l.kind === 'cap');
            if (cell.monthlyCap !== null && metered > cell.monthlyCap) {
              expect(cap?.amount).toBe(cell.monthlyCap - metered);
            } else {
              expect(cap).toBeUndefined();
            }
            expect(totalOf(lines)).toBe(lines.reduce((sum, l) => sum + l.amount, 0));
            expect(totalOf(lines)).toBe(Math.min(metered, cell.monthlyCap ?? Infinity));
          }
        }
        expect(Object.fromEntries(billed)).toEqual(Object.fromEntries(expected));
      }),
      { numRuns: 300 },
    );
  });

  it('charges a slot its monthly price by the second it is held, split exactly at month ends', () => {
    const slot = fc.record({
      createdOffset: fc.integer({ min: 0, max: 80 * 86_400 }),
      heldFor: fc.option(fc.integer({ min: 0, max: 80 * 86_400 }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(slot, { minLength: 1, maxLength: 8 }), (specs) => {
        const origin = Date.UTC(2026, 0, 10) / 1000;
        const asOf = new Date((origin + 100 * 86_400) * 1000);
        const slots: HeldSlot[] = specs.map((s) => ({
          product: 'agent',
          size: 'small',
          region: 'eu',
          createdAt: new Date((origin + s.createdOffset) * 1000),
          removedAt:
            s.heldFor === null ? null : new Date((origin + s.createdOffset + s.heldFor) * 1000),
        }));
        let held = 0;
        for (const periodStart of monthsBetween(origin * 1000, asOf.getTime())) {
          const periodEnd = nextMonthStart(periodStart);
          const window = { periodStart, periodEnd, asOf: asOf < periodEnd ? asOf : periodEnd };
          const lines = billLines(prices, window, [], slots);
          expect(lines.length).toBeLessThanOrEqual(1);
          for (const line of lines) {
            held += line.seconds;
            const monthSeconds = (periodEnd.getTime() - periodStart.getTime()) / 1000;
            expect(line.amount).toBe(divideRoundingHalfUp(line.seconds * 1200, monthSeconds));
            expect(line.quantity).toBe(
              slots.filter(
                (s) => s.createdAt < window.asOf && (!s.removedAt || s.removedAt >= window.asOf),
              ).length,
            );
          }
        }
        const expected = slots.reduce((sum, s) => {
          const from = s.createdAt.getTime() / 1000;
          const to = Math.min((s.removedAt ?? asOf).getTime(), asOf.getTime()) / 1000;
          return sum + Math.max(0, to - from);
        }, 0);
        expect(held).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('rounds half up, once per line', () => {
    expect(divideRoundingHalfUp(1800, 3600)).toBe(1);
    expect(divideRoundingHalfUp(1799, 3600)).toBe(0);
    expect(divideRoundingHalfUp(5399, 3600)).toBe(1);
    expect(divideRoundingHalfUp(5400, 3600)).toBe(2);
    expect(divideRoundingHalfUp(2 ** 52, 3)).toBe(Math.round(2 ** 52 / 3));
  });

  it('holds a full month of a slot at exactly its monthly price', () => {
    const periodStart = new Date(Date.UTC(2026, 1, 1));
    const periodEnd = nextMonthStart(periodStart);
    const lines = billLines(
      prices,
      { periodStart, periodEnd, asOf: periodEnd },
      [],
      [
        {
          product: 'plain_vm',
          size: 'large',
          region: 'us',
          createdAt: new Date(0),
          removedAt: null,
        },
      ],
    );
    expect(lines).toEqual([
      expect.objectContaining({ kind: 'slot', quantity: 1, unitAmount: 2400, amount: 2400 }),
    ]);
  });
});
