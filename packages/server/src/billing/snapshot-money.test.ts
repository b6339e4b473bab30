import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultPriceBook, type Prices } from '../config/price-book.js';
import { billLines, type HeldSnapshot, monthStart, nextMonthStart, totalOf } from './money.js';

const ACCOUNTS = ['a', 'b', 'c'] as const;
const MACHINES = [
  { id: '00000000-0000-4000-8000-00000000000a', kind: 'agent' as const },
  { id: '00000000-0000-4000-8000-00000000000b', kind: 'plain_vm' as const },
];
/** Everything starts shortly before a month's end, so storage crosses month boundaries. */
const ORIGIN = Date.UTC(2026, 0, 30, 21, 0, 0, 0);

const withPrice = (snapshotGbMonth: number): Prices => {
  const prices = defaultPriceBook();
  return { ...prices, book: { ...prices.book, snapshotGbMonth } };
};

/** A snapshot: made ready, then perhaps deleted, while its machine moves between accounts. */
const snapshot = fc.record({
  machine: fc.constantFrom(0, 1),
  // Up to 2 TB, any byte count (GB-seconds outgrow a double's whole numbers).
  sizeBytes: fc.oneof(
    fc.integer({ min: 0, max: 2_000_000_000_000 }),
    fc.constantFrom(0, 1, 999_999_999),
  ),
  readyMs: fc.integer({ min: 0, max: 4 * 86_400_000 }),
  heldMs: fc.option(fc.integer({ min: 0, max: 40 * 86_400_000 }), { nil: null }),
});

/** A machine's transfers: to an account, at an instant (its snapshots go with it). */
const transfers = fc.array(
  fc.record({
    atMs: fc.integer({ min: 0, max: 45 * 86_400_000 }),
    account: fc.constantFrom(...ACCOUNTS),
  }),
  { maxLength: 6 },
);

type Snapshot = typeof snapshot extends fc.Arbitrary<infer S> ? S : never;
type Transfer = { atMs: number; account: string };

/**
 * The storage periods the service records: a period from ready to the first transfer, one per
 * transfer while held, the last one ending at the delete (open when not deleted): what
 * `rolloverSnapshotUsage` and `rolloverMachineSnapshotsUsage` write.
 */
function periodsOf(s: Snapshot, id: string, moves: readonly Transfer[]) {
  const ready = ORIGIN + s.readyMs;
  const deleted = s.heldMs === null ? null : ready + s.heldMs;
  let account = 'a';
  for (const move of moves) if (ORIGIN + move.atMs <= ready) account = move.account;
  const cuts = moves.filter(
    (move) => ORIGIN + move.atMs > ready && (deleted === null || ORIGIN + move.atMs < deleted),
  );
  const periods: (HeldSnapshot & { accountId: string })[] = [];
  let from = ready;
  for (const cut of [...cuts, null]) {
    const to = cut ? ORIGIN + cut.atMs : deleted;
    const machine = MACHINES[s.machine] as (typeof MACHINES)[number];
    periods.push({
      snapshotId: id,
      machineKind: machine.kind,
      machineId: machine.id,
      machineName: 'm',
      size: 'small',
      region: 'eu',
      sizeBytes: s.sizeBytes,
      startedAt: new Date(from),
      endedAt: to === null ? null : new Date(to),
      accountId: account,
    });
    if (cut) {
      account = cut.account;
      from = ORIGIN + cut.atMs;
    }
  }
  return periods;
}

/**
 * The oracle, apart from the code under test: the whole seconds a snapshot is held (from the
 * second it became ready to the second it was deleted), each given to the account holding it
 * when that second ends and to the month it falls in, found by sweeping the instants where
 * anything changes.
 */
function heldSeconds(s: Snapshot, moves: readonly Transfer[], asOfMs: number) {
  const first = Math.floor((ORIGIN + s.readyMs) / 1000);
  const last = Math.floor(
    Math.min(s.heldMs === null ? asOfMs : ORIGIN + s.readyMs + s.heldMs, asOfMs) / 1000,
  );
  const owner = (sec: number) => {
    let account = 'a';
    for (const move of moves)
      if (Math.floor((ORIGIN + move.atMs) / 1000) <= sec) account = move.account;
    return account;
  };
  const cuts = new Set<number>([first, last]);
  for (const move of moves) cuts.add(Math.floor((ORIGIN + move.atMs) / 1000));
  for (
    let m = monthStart(new Date(first * 1000));
    m.getTime() < last * 1000;
    m = nextMonthStart(m)
  ) {
    cuts.add(m.getTime() / 1000);
  }
  const sorted = [...cuts].filter((c) => c >= first && c <= last).sort((x, y) => x - y);
  const counts = new Map<string, number>();
  for (let i = 0; i + 1 < sorted.length; i++) {
    const from = sorted[i] as number;
    const to = sorted[i + 1] as number;
    const key = `${owner(from)}/${monthStart(new Date(from * 1000)).toISOString()}`;
    counts.set(key, (counts.get(key) ?? 0) + (to - from));
  }
  return counts;
}

/** `n / d` rounded half up, in exact integers (written apart from the code under test). */
const roundHalfUp = (n: bigint, d: bigint) => {
  const q = n / d;
  return Number(2n * (n - q * d) >= d ? q + 1n : q);
};

describe('the money of snapshot storage', () => {
  it('charges each byte-second held exactly once, to the account holding it, per GB-month, rounded once a line', () => {
    const machinesMoves = fc.tuple(transfers, transfers);
    fc.assert(
      fc.property(
        fc.array(snapshot, { minLength: 1, maxLength: 6 }),
        machinesMoves,
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 50 * 86_400_000 }),
        (snapshots, moves, price, asOfMs) => {
          const prices = withPrice(price);
          const asOf = ORIGIN + asOfMs;
          const movesOf = (s: Snapshot) => [...moves[s.machine]].sort((x, y) => x.atMs - y.atMs);
          const periods = snapshots.flatMap((s, i) =>
            periodsOf(s, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, movesOf(s)),
          );
          // Expected seconds and byte-seconds by account, month and machine.
          const expectedSeconds = new Map<string, number>();
          const expectedBytes = new Map<string, bigint>();
          for (const s of snapshots) {
            // A snapshot of 0 bytes stores nothing: not on the bill.
            if (s.sizeBytes === 0) continue;
            for (const [key, seconds] of heldSeconds(s, movesOf(s), asOf)) {
              const full = `${key}/${(MACHINES[s.machine] as { id: string }).id}`;
              expectedSeconds.set(full, (expectedSeconds.get(full) ?? 0) + seconds);
              expectedBytes.set(
                full,
                (expectedBytes.get(full) ?? 0n) + BigInt(seconds) * BigInt(s.sizeBytes),
              );
            }
          }
          const billedSeconds = new Map<string, number>();
          for (const account of ACCOUNTS) {
            const own = periods.filter((p) => p.accountId === account);
            for (
              let periodStart = monthStart(new Date(ORIGIN));
              periodStart.getTime() < asOf;
              periodStart = nextMonthStart(periodStart)
            ) {
              const periodEnd = nextMonthStart(periodStart);
              const windowEnd = new Date(Math.min(asOf, periodEnd.getTime()));
              const lines = billLines(
                prices,
                { periodStart, periodEnd, asOf: windowEnd },
                [],
                [],
                own,
              );
              const monthSeconds = BigInt((periodEnd.getTime() - periodStart.getTime()) / 1000);
              expect(new Set(lines.map((l) => l.resourceId)).size).toBe(lines.length);
              for (const line of lines) {
                expect(line.kind).toBe('snapshot');
                expect(line.unitAmount).toBe(price);
                expect(line.amount).toBeGreaterThanOrEqual(0);
                const key = `${account}/${periodStart.toISOString()}/${line.resourceId}`;
                billedSeconds.set(key, line.seconds);
                const byteSeconds = expectedBytes.get(key) ?? 0n;
                expect(line.amount).toBe(
                  roundHalfUp(byteSeconds * BigInt(price), 1_000_000_000n * monthSeconds),
                );
                // Held at the window's end: the snapshots of the machine stored then.
                const held = own.filter(
                  (p) =>
                    p.machineId === line.resourceId &&
                    p.sizeBytes > 0 &&
                    Math.floor(p.startedAt.getTime() / 1000) <
                      Math.floor(windowEnd.getTime() / 1000) &&
                    (p.endedAt === null ||
                      Math.floor(p.endedAt.getTime() / 1000) >=
                        Math.floor(windowEnd.getTime() / 1000)),
                );
                expect(line.quantity).toBe(new Set(held.map((p) => p.snapshotId)).size);
              }
              expect(totalOf(lines)).toBe(lines.reduce((sum, l) => sum + l.amount, 0));
            }
          }
          // Every second held is billed once, to its account, in its month: none lost or added.
          const nonZero = (m: Map<string, number>) =>
            Object.fromEntries([...m].filter(([, seconds]) => seconds > 0));
          expect(nonZero(billedSeconds)).toEqual(nonZero(expectedSeconds));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('charges a month of 1 GB held the whole month exactly the price, and a day of 1 TB its share', () => {
    const periodStart = new Date(Date.UTC(2026, 1, 1));
    const periodEnd = nextMonthStart(periodStart);
    const held = (sizeBytes: number, from: Date, to: Date | null): HeldSnapshot => ({
      snapshotId: '00000000-0000-4000-8000-000000000001',
      machineKind: 'agent',
      machineId: '00000000-0000-4000-8000-0000000000aa',
      machineName: 'dev',
      size: 'medium',
      region: 'eu',
      sizeBytes,
      startedAt: from,
      endedAt: to,
    });
    const prices = withPrice(11);
    const month = billLines(
      prices,
      { periodStart, periodEnd, asOf: periodEnd },
      [],
      [],
      [held(1_000_000_000, new Date(0), null)],
    );
    expect(month).toEqual([
      {
        kind: 'snapshot',
        description: 'Snapshot storage, Agent “dev” (eu), 1.000 GB-months',
        product: 'agent',
        size: 'medium',
        region: 'eu',
        resourceId: '00000000-0000-4000-8000-0000000000aa',
        rate: null,
        quantity: 1,
        seconds: 28 * 86_400,
        unitAmount: 11,
        amount: 11,
      },
    ]);
    // 1 TB for one day of February's 28: 1000 × 11 / 28 = 392.86 cents, rounded to 393.
    const day = billLines(
      prices,
      { periodStart, periodEnd, asOf: periodEnd },
      [],
      [],
      [held(1_000_000_000_000, new Date(Date.UTC(2026, 1, 3)), new Date(Date.UTC(2026, 1, 4)))],
    );
    expect(day).toMatchObject([{ quantity: 0, seconds: 86_400, amount: 393 }]);
    expect(day[0]?.description).toBe('Snapshot storage, Agent “dev” (eu), 35.714 GB-months');
    // One that stores nothing (a pool that does not account for it) is not on the bill.
    const window = { periodStart, periodEnd, asOf: periodEnd };
    expect(billLines(prices, window, [], [], [held(0, new Date(0), null)])).toEqual([]);
  });
});
