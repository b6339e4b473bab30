import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/test-db.js';
import { defaultPriceBook, type Prices } from '../config/price-book.js';
import type { Executor } from '../db/database.js';
import { accountLedger } from './ledger.repo.js';
import { billLines, monthStart, nextMonthStart } from './money.js';
import { rolloverMachineSnapshotsUsage, rolloverSnapshotUsage } from './snapshot-usage.repo.js';

/** Something the snapshot service does, `afterMs` after the previous one. */
type Op =
  | { afterMs: number; kind: 'ready' | 'delete'; snapshot: number }
  | { afterMs: number; kind: 'transfer'; machine: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    afterMs: fc.integer({ min: 0, max: 30 * 3_600_000 }),
    kind: fc.constantFrom('ready' as const, 'delete' as const),
    snapshot: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({
    afterMs: fc.integer({ min: 0, max: 30 * 3_600_000 }),
    kind: fc.constant('transfer' as const),
    machine: fc.integer({ min: 0, max: 1 }),
  }),
);

const sizes = fc.array(fc.oneof(fc.integer({ min: 0, max: 3_000_000_000_000 }), fc.constant(0)), {
  minLength: 4,
  maxLength: 4,
});

/** `n / d` rounded half up, in exact integers (apart from the code under test). */
const roundHalfUp = (n: bigint, d: bigint) => {
  const q = n / d;
  return Number(2n * (n - q * d) >= d ? q + 1n : q);
};

/** Whole seconds of `[from, to)` (instants in ms, taken at their second) inside `[lo, hi)`. */
const secondsIn = (from: number, to: number, lo: number, hi: number) =>
  Math.max(
    0,
    Math.min(Math.floor(to / 1000), hi / 1000) - Math.max(Math.floor(from / 1000), lo / 1000),
  );

/**
 * The storage periods the rollover functions write, read back as bills read them: random
 * snapshots made ready, deleted and moved with their machine between two accounts at random
 * instants (milliseconds apart or hours), each byte-second charged once, to the account holding
 * it then, in its month, at the GB-month price rounded once a line.
 */
describe.each(databaseKinds)('snapshot storage periods on %s', (kind) => {
  let test: TestDatabase;
  let accounts: [string, string];
  const db = () => test.database.db;
  const prices: Prices = (() => {
    const book = defaultPriceBook();
    return { ...book, book: { ...book.book, snapshotGbMonth: 7 } };
  })();

  beforeAll(async () => {
    test = await createTestDatabase(kind);
    accounts = [randomUUID(), randomUUID()];
    for (const [index, id] of accounts.entries()) {
      await db()
        .insertInto('accounts')
        .values({ id, slug: `stored-${index}`, name: `Stored ${index}`, kind: 'organization' })
        .execute();
    }
  });
  afterAll(async () => {
    await test?.database.close();
    await test?.drop();
  });

  it('charges each byte-second held once, to its holder, in its month', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 14 }),
        sizes,
        fc.integer({ min: 0, max: 999 }),
        async (ops, sizeOf, startMs) => {
          const machines: string[] = [randomUUID(), randomUUID()];
          const owner = [0, 0];
          const snapshots = sizeOf.map((size, index) => ({
            id: randomUUID(),
            machine: index % 2,
            size,
            status: 'creating' as 'creating' | 'ready' | 'failed' | 'deleted',
            // Who holds it from when: the oracle's notes.
            held: [] as { at: number; account: number | null }[],
          }));
          // A few hours before a month's end, so storage crosses it.
          let at = Date.UTC(2026, 4, 31, 20) + startMs;
          const write = (fn: (tx: Executor) => Promise<unknown>) => test.database.transaction(fn);
          await write(async (tx) => {
            for (const id of machines) {
              await tx
                .insertInto('agents')
                .values({
                  id,
                  accountId: accounts[0],
                  name: `stored-${id.slice(0, 8)}`,
                  subdomain: `s${id.slice(0, 8)}`,
                  size: 'large',
                  region: 'us',
                  billingType: 'metered',
                  state: 'running',
                  provider: 'test',
                } as never)
                .execute();
            }
            for (const s of snapshots) {
              await tx
                .insertInto('machineSnapshots')
                .values({
                  id: s.id,
                  machineKind: 'agent',
                  machineId: machines[s.machine] as string,
                  accountId: accounts[0],
                  name: s.id,
                  kind: 'manual',
                  status: 'creating',
                  provider: 'local',
                })
                .execute();
            }
          });
          for (const o of ops) {
            at += o.afterMs;
            const when = new Date(at);
            if (o.kind === 'transfer') {
              owner[o.machine] = 1 - (owner[o.machine] as number);
              const to = accounts[owner[o.machine] as number] as string;
              await write(async (tx) => {
                await tx
                  .updateTable('agents')
                  .set({ accountId: to })
                  .where('id', '=', machines[o.machine] as string)
                  .execute();
                await tx
                  .updateTable('machineSnapshots')
                  .set({ accountId: to })
                  .where('machineId', '=', machines[o.machine] as string)
                  .where('deletedAt', 'is', null)
                  .execute();
                await rolloverMachineSnapshotsUsage(tx, machines[o.machine] as string, when);
              });
              for (const s of snapshots) {
                if (s.machine === o.machine && s.status === 'ready') {
                  s.held.push({ at, account: owner[o.machine] as number });
                }
              }
              continue;
            }
            const s = snapshots[o.snapshot] as (typeof snapshots)[number];
            if (o.kind === 'ready' && s.status === 'creating') {
              s.status = 'ready';
              await write(async (tx) => {
                await tx
                  .updateTable('machineSnapshots')
                  .set({ status: 'ready', sizeBytes: s.size, readyAt: when })
                  .where('id', '=', s.id)
                  .execute();
                await rolloverSnapshotUsage(tx, s.id, when);
              });
              s.held.push({ at, account: owner[s.machine] as number });
            } else if (o.kind === 'delete' && s.status !== 'deleted') {
              // A snapshot still being taken fails; a ready one is deleted.
              const failed = s.status === 'creating';
              s.status = failed ? 'failed' : 'deleted';
              await write(async (tx) => {
                await tx
                  .updateTable('machineSnapshots')
                  .set(failed ? { status: 'failed' } : { deletedAt: when })
                  .where('id', '=', s.id)
                  .execute();
                await rolloverSnapshotUsage(tx, s.id, when);
              });
              if (!failed) s.held.push({ at, account: null });
            }
          }
          const end = at + 1_500;

          // The oracle: each stretch between notes, split by month, to its holder.
          const wantSeconds = new Map<string, number>();
          const wantBytes = new Map<string, bigint>();
          const first = monthStart(new Date(Date.UTC(2026, 4, 31)));
          for (const s of snapshots) {
            for (const [index, note] of s.held.entries()) {
              // A snapshot of 0 bytes stores nothing: not on the bill.
              if (note.account === null || s.size === 0) continue;
              const until = s.held[index + 1]?.at ?? end;
              for (let m = first; m.getTime() < end; m = nextMonthStart(m)) {
                const seconds = secondsIn(note.at, until, m.getTime(), nextMonthStart(m).getTime());
                if (seconds === 0) continue;
                const key = `${note.account}/${m.toISOString()}/${machines[s.machine]}`;
                wantSeconds.set(key, (wantSeconds.get(key) ?? 0) + seconds);
                wantBytes.set(key, (wantBytes.get(key) ?? 0n) + BigInt(seconds) * BigInt(s.size));
              }
            }
          }

          // The bills, from the database.
          const billedSeconds = new Map<string, number>();
          for (const [index, accountId] of accounts.entries()) {
            for (let m = first; m.getTime() < end; m = nextMonthStart(m)) {
              const periodEnd = nextMonthStart(m);
              const asOf = new Date(Math.min(end, periodEnd.getTime()));
              const ledger = await accountLedger(db(), accountId, m, asOf);
              const window = { periodStart: m, periodEnd, asOf };
              const monthSeconds = BigInt((periodEnd.getTime() - m.getTime()) / 1000);
              for (const line of billLines(prices, window, [], [], ledger.snapshots)) {
                if (!machines.includes(line.resourceId as string)) continue;
                const key = `${index}/${m.toISOString()}/${line.resourceId}`;
                billedSeconds.set(key, line.seconds);
                expect(line).toMatchObject({ product: 'agent', size: 'large', region: 'us' });
                // Named while the machine is on this account now; by its id where it went.
                const here = owner[machines.indexOf(line.resourceId as string)] === index;
                const short = line.resourceId?.slice(0, 8);
                expect(line.description).toContain(
                  here ? `Agent “stored-${short}” (us)` : `Agent ${short} (us)`,
                );
                expect(line.amount).toBe(
                  roundHalfUp((wantBytes.get(key) ?? 0n) * 7n, 1_000_000_000n * monthSeconds),
                );
              }
            }
          }
          expect(Object.fromEntries(billedSeconds)).toEqual(Object.fromEntries(wantSeconds));
          // At most one open period per snapshot, and none for one not held.
          const open = await db()
            .selectFrom('snapshotUsage')
            .select(['snapshotId', 'accountId'])
            .where('endedAt', 'is', null)
            .where(
              'snapshotId',
              'in',
              snapshots.map((s) => s.id),
            )
            .execute();
          expect(open.map((row) => row.snapshotId).sort()).toEqual(
            snapshots
              .filter((s) => s.status === 'ready')
              .map((s) => s.id)
              .sort(),
          );
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);

  it('keeps the size and region of a machine whose row is gone from the period before', async () => {
    const machineId = randomUUID();
    const [kept, late] = [randomUUID(), randomUUID()];
    const at = (hours: number) => new Date(Date.UTC(2026, 6, 1) + hours * 3_600_000);
    await test.database.transaction(async (tx) => {
      await tx
        .insertInto('agents')
        .values({
          id: machineId,
          accountId: accounts[0],
          name: 'gone',
          subdomain: `g${machineId.slice(0, 8)}`,
          size: 'medium',
          region: 'eu',
          billingType: 'metered',
          state: 'running',
          provider: 'test',
        } as never)
        .execute();
      for (const id of [kept, late]) {
        await tx
          .insertInto('machineSnapshots')
          .values({
            id,
            machineKind: 'agent',
            machineId,
            accountId: accounts[0],
            name: id,
            kind: 'backup',
            status: id === kept ? 'ready' : 'creating',
            sizeBytes: 5_000_000_000,
            provider: 'local',
          })
          .execute();
      }
      await rolloverSnapshotUsage(tx, kept, at(0));
    });
    await test.database.transaction(async (tx) => {
      await tx.deleteFrom('agents').where('id', '=', machineId).execute();
      await tx
        .updateTable('machineSnapshots')
        .set({ status: 'ready' })
        .where('id', '=', late)
        .execute();
      await rolloverMachineSnapshotsUsage(tx, machineId, at(1));
    });
    const rows = await db()
      .selectFrom('snapshotUsage')
      .select(['snapshotId', 'size', 'region', 'startedAt', 'endedAt'])
      .where('machineId', '=', machineId)
      .orderBy('seq')
      .execute();
    expect(rows).toEqual([
      { snapshotId: kept, size: 'medium', region: 'eu', startedAt: at(0), endedAt: at(1) },
      { snapshotId: kept, size: 'medium', region: 'eu', startedAt: at(1), endedAt: null },
    ]);
  });
});
