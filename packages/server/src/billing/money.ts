import {
  CHARGE_RATE,
  type Cohort,
  type InvoiceLine,
  MachineState,
  type Product,
  type Region,
  type Size,
} from '@svc/contract';
import type { Prices } from '../config/price-book.js';

/**
 * The money of a bill, from the usage ledger and the slots (docs/billing.md):
 * - time is counted in whole seconds: an instant is billed from its second (`floor`), so the
 *   periods of one machine, which meet end to start, split its life without losing or counting
 *   twice a second, and so do month boundaries;
 * - a metered machine is charged its cell's hourly rate by the second while running, stopping,
 *   starting or restarting, and the paused rate while stopped (the hourly rate on the current
 *   cohort); nothing while provisioning, destroying or in error, nor while subscription-billed;
 * - a slot is charged its cell's monthly price by the second it is held, as a share of the month;
 * - snapshot storage is charged the book's `snapshotGbMonth` per GB (10^9 bytes) by the second
 *   it is held, as a share of the month, one line per machine (its snapshots and backups);
 * - each line's amount is rounded once, half up, to the minor unit; a cap line takes a machine's
 *   metered lines down to its cell's monthly cap; the total is the sum of the lines.
 */

/** One usage period, as the ledger keeps it. */
export interface BilledPeriod {
  readonly resourceKind: Product;
  readonly resourceId: string;
  /** The machine's name while it is on the account; null once destroyed or moved away. */
  readonly name: string | null;
  readonly state: string;
  readonly billingType: 'metered' | 'subscription';
  readonly size: Size;
  readonly region: Region;
  readonly cohort: Cohort;
  readonly startedAt: Date;
  /** Null while open: it runs to the window's end. */
  readonly endedAt: Date | null;
}

/** One slot, held from `createdAt` until `removedAt`. */
export interface HeldSlot {
  readonly product: Product;
  readonly size: Size;
  readonly region: Region;
  readonly createdAt: Date;
  readonly removedAt: Date | null;
}

/** One snapshot storage period, as bills read it (with its machine, for the line). */
export interface HeldSnapshot {
  readonly snapshotId: string;
  readonly machineKind: 'agent' | 'plain_vm';
  readonly machineId: string;
  /** The machine's name while it is on this account; null once destroyed or moved away. */
  readonly machineName: string | null;
  /** The machine's size and region when the period opened (the line shows the last). */
  readonly size: Size;
  readonly region: Region;
  readonly sizeBytes: number;
  readonly startedAt: Date;
  /** Null while open: it runs to the window's end. */
  readonly endedAt: Date | null;
}

export type Rate = NonNullable<(typeof CHARGE_RATE)[MachineState]>;

/** The rate a state is charged at; null for states charged nothing (the contract's table). */
export const rateOfState = (state: string): Rate | null =>
  state in CHARGE_RATE ? CHARGE_RATE[state as MachineState] : null;

/** The states charged for (at some rate). */
export const CHARGED_STATES = MachineState.options.filter((state) => CHARGE_RATE[state] !== null);

/** A window of time, as whole seconds since the epoch: `[from, to)`. */
export interface Window {
  readonly from: number;
  readonly to: number;
}

export const second = (at: Date) => Math.floor(at.getTime() / 1000);

/** Seconds of `[start, end)` inside the window (`end` null: open, up to the window's end). */
export function overlap(window: Window, start: Date, end: Date | null): number {
  const from = Math.max(second(start), window.from);
  const to = Math.min(end === null ? window.to : second(end), window.to);
  return Math.max(0, to - from);
}

/** `numerator / denominator` rounded half up, exactly (both non-negative integers). */
export function divideRoundingHalfUp(numerator: number | bigint, denominator: number | bigint) {
  const n = BigInt(numerator);
  const d = BigInt(denominator);
  return Number((2n * n + d) / (2n * d));
}

/** A GB of snapshot storage, as the price book prices it: 10^9 bytes, as the word says. */
export const BYTES_PER_GB = 1_000_000_000;

/** The first instant of `at`'s calendar month, in UTC: bills are per calendar month. */
export const monthStart = (at: Date) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/** The first instant of the calendar month after `at`'s. */
export const nextMonthStart = (at: Date) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));

/** What one bill covers: the calendar month `periodStart`…`periodEnd`, counted up to `asOf`. */
export interface BillWindow {
  readonly periodStart: Date;
  readonly periodEnd: Date;
  /** Usage and slots count up to here (the period's end on an invoice). */
  readonly asOf: Date;
}

const PRODUCT_NAME: Readonly<Record<Product, string>> = { agent: 'Agent', plain_vm: 'Plain VM' };

/**
 * The lines of one account's bill for the window, in a stable order: slots by cell, then each
 * machine's metered lines (running, then paused) and its cap line, then each machine's snapshot
 * storage. `periods`, `slots` and `snapshots` are the account's; periods of other states and
 * billing types may be among them.
 */
export function billLines(
  prices: Prices,
  window: BillWindow,
  periods: readonly BilledPeriod[],
  slots: readonly HeldSlot[],
  snapshots: readonly HeldSnapshot[] = [],
): InvoiceLine[] {
  const span: Window = { from: second(window.periodStart), to: second(window.asOf) };
  const monthSeconds = second(window.periodEnd) - second(window.periodStart);
  return [
    ...slotLines(prices, span, monthSeconds, slots),
    ...meteredLines(prices, span, periods),
    ...snapshotLines(prices, span, monthSeconds, snapshots),
  ];
}

function slotLines(
  prices: Prices,
  span: Window,
  monthSeconds: number,
  slots: readonly HeldSlot[],
): InvoiceLine[] {
  const cells = new Map<string, { slot: HeldSlot; quantity: number; seconds: number }>();
  for (const slot of slots) {
    const seconds = overlap(span, slot.createdAt, slot.removedAt);
    if (seconds === 0) continue;
    const key = `${slot.product}/${slot.size}/${slot.region}`;
    const cell = cells.get(key) ?? { slot, quantity: 0, seconds: 0 };
    cell.seconds += seconds;
    // Held at the window's end: still on the subscription.
    if (slot.removedAt === null || second(slot.removedAt) >= span.to) cell.quantity += 1;
    cells.set(key, cell);
  }
  return [...cells.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, { slot, quantity, seconds }]) => {
      const monthly = prices.cell(slot.product, slot.size, slot.region).monthly;
      return {
        kind: 'slot',
        description: `${PRODUCT_NAME[slot.product]} slot, ${slot.size}, ${slot.region}`,
        product: slot.product,
        size: slot.size,
        region: slot.region,
        resourceId: null,
        rate: null,
        quantity,
        seconds,
        unitAmount: monthly,
        amount: divideRoundingHalfUp(seconds * monthly, monthSeconds),
      };
    });
}

function meteredLines(prices: Prices, span: Window, periods: readonly BilledPeriod[]) {
  // By machine, then rate and size: a resized machine's seconds at each size are charged at that
  // size's rate (a rate per cohort for paused).
  type Entry = { rate: Rate; size: Size; seconds: number; hourly: number };
  const machines = new Map<string, { last: BilledPeriod; seconds: Map<string, Entry> }>();
  for (const period of periods) {
    const rate = rateOfState(period.state);
    if (rate === null || period.billingType !== 'metered') continue;
    const seconds = overlap(span, period.startedAt, period.endedAt);
    if (seconds === 0) continue;
    const cell = prices.cell(period.resourceKind, period.size, period.region);
    const hourly =
      rate === 'paused' && period.cohort === 'legacy'
        ? (cell.legacyPausedHourly ?? cell.hourly)
        : cell.hourly;
    const machine = machines.get(period.resourceId) ?? { last: period, seconds: new Map() };
    machine.last = period;
    const key = `${rate}/${period.size}`;
    const entry = machine.seconds.get(key) ?? { rate, size: period.size, seconds: 0, hourly };
    entry.seconds += seconds;
    machine.seconds.set(key, entry);
    machines.set(period.resourceId, machine);
  }
  const lines: InvoiceLine[] = [];
  for (const [resourceId, { last, seconds }] of machines) {
    // The cap is the size it has now (a resize only grows it: the highest cap of the month).
    const cell = prices.cell(last.resourceKind, last.size, last.region);
    const labelOf = (size: Size) =>
      `${PRODUCT_NAME[last.resourceKind]} ${last.name ? `“${last.name}”` : resourceId.slice(0, 8)} (${size}, ${last.region})`;
    const base = (size: Size) =>
      ({ product: last.resourceKind, size, region: last.region, resourceId }) as const;
    let sum = 0;
    for (const rate of ['running', 'paused'] as const) {
      for (const entry of seconds.values()) {
        if (entry.rate !== rate) continue;
        const amount = divideRoundingHalfUp(entry.seconds * entry.hourly, 3600);
        sum += amount;
        lines.push({
          kind: 'metered',
          description: `${labelOf(entry.size)}, ${rate === 'running' ? 'running' : 'stopped'}`,
          ...base(entry.size),
          rate,
          quantity: 1,
          seconds: entry.seconds,
          unitAmount: entry.hourly,
          amount,
        });
      }
    }
    if (cell.monthlyCap !== null && sum > cell.monthlyCap) {
      lines.push({
        kind: 'cap',
        description: `${labelOf(last.size)}, monthly cap`,
        ...base(last.size),
        rate: null,
        quantity: 1,
        seconds: 0,
        unitAmount: cell.monthlyCap,
        amount: cell.monthlyCap - sum,
      });
    }
  }
  return lines;
}

/**
 * One line per machine: the byte-seconds of its snapshots' periods in the window, charged
 * `snapshotGbMonth` per GB-month, computed exactly (byte-seconds outgrow a double's integers)
 * and rounded once. Not under the machine's monthly cap: the cap is of its metered time.
 */
function snapshotLines(
  prices: Prices,
  span: Window,
  monthSeconds: number,
  snapshots: readonly HeldSnapshot[],
): InvoiceLine[] {
  type Entry = { last: HeldSnapshot; byteSeconds: bigint; seconds: number; held: Set<string> };
  const machines = new Map<string, Entry>();
  for (const snapshot of snapshots) {
    const seconds = overlap(span, snapshot.startedAt, snapshot.endedAt);
    // One that stores nothing (0 bytes: a pool that does not account for it) is not billed.
    if (seconds === 0 || snapshot.sizeBytes === 0) continue;
    const entry = machines.get(snapshot.machineId) ?? {
      last: snapshot,
      byteSeconds: 0n,
      seconds: 0,
      held: new Set<string>(),
    };
    entry.last = snapshot;
    entry.byteSeconds += BigInt(snapshot.sizeBytes) * BigInt(seconds);
    entry.seconds += seconds;
    // Held at the window's end: still stored.
    if (snapshot.endedAt === null || second(snapshot.endedAt) >= span.to) {
      entry.held.add(snapshot.snapshotId);
    }
    machines.set(snapshot.machineId, entry);
  }
  const price = prices.book.snapshotGbMonth;
  const gbMonthSeconds = BigInt(BYTES_PER_GB) * BigInt(monthSeconds);
  return [...machines.values()].map(({ last, byteSeconds, seconds, held }) => {
    const label = last.machineName ? `“${last.machineName}”` : last.machineId.slice(0, 8);
    // Thousandths of a GB-month, for the reader; the amount is computed from the exact value.
    const milli = divideRoundingHalfUp(byteSeconds * 1000n, gbMonthSeconds);
    const gbMonths = `${Math.floor(milli / 1000)}.${String(milli % 1000).padStart(3, '0')}`;
    return {
      kind: 'snapshot',
      description: `Snapshot storage, ${PRODUCT_NAME[last.machineKind]} ${label} (${last.region}), ${gbMonths} GB-months`,
      product: last.machineKind,
      size: last.size,
      region: last.region,
      resourceId: last.machineId,
      rate: null,
      quantity: held.size,
      seconds,
      unitAmount: price,
      amount: divideRoundingHalfUp(byteSeconds * BigInt(price), gbMonthSeconds),
    };
  });
}

/** The sum of the lines' amounts. */
export const totalOf = (lines: readonly InvoiceLine[]) =>
  lines.reduce((total, line) => total + line.amount, 0);
