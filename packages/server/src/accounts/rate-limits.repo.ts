import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import {
  type AttemptStreak,
  type BackoffPolicy,
  countAttempt,
  retryAfterSeconds,
  waitMs,
} from '../util/attempt-backoff.js';

/** One counter an attempt is charged to: a row of `rate_limits`, slowed down by its policy. */
export interface RateCounter {
  readonly key: string;
  readonly policy: BackoffPolicy;
}

/**
 * Charges one attempt to every counter, or to none and throws `rate_limited` with `Retry-After`
 * (the longest wait) while any of them asks to wait. Run it in a transaction of its own, before
 * the attempt's work: the rows stay locked until commit, so a parallel burst is counted one by
 * one and cannot slip past a wait. Rows are locked in key order, so two attempts never deadlock.
 */
export async function takeAttempt(tx: Executor, counters: readonly RateCounter[], now: Date) {
  const sorted = [...counters].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const keys = sorted.map((counter) => counter.key);
  // A first attempt needs a row to lock; zero attempts ask for no wait.
  await tx
    .insertInto('rateLimits')
    .values(keys.map((key) => ({ key, attempts: 0, lastAttemptAt: now })))
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const rows = await tx
    .selectFrom('rateLimits')
    .selectAll()
    .where('key', 'in', keys)
    .orderBy('key')
    .forUpdate()
    .execute();
  const streaks = new Map<string, AttemptStreak>(
    rows.map((row) => [
      row.key,
      { attempts: row.attempts, lastAttemptAt: row.lastAttemptAt.getTime() },
    ]),
  );
  const nowMs = now.getTime();
  const wait = Math.max(0, ...sorted.map((c) => waitMs(c.policy, streaks.get(c.key), nowMs)));
  if (wait > 0) {
    throw new AppError('rate_limited', {
      message: 'too many attempts',
      headers: { 'Retry-After': String(retryAfterSeconds(wait)) },
    });
  }
  for (const counter of sorted) {
    const next = countAttempt(counter.policy, streaks.get(counter.key), nowMs);
    await tx
      .updateTable('rateLimits')
      .set({ attempts: next.attempts, lastAttemptAt: new Date(next.lastAttemptAt) })
      .where('key', '=', counter.key)
      .execute();
  }
}

/** Gives one attempt back to a counter (the attempt turned out not to count against it). */
export async function refundAttempt(db: Executor, key: string) {
  await db
    .updateTable('rateLimits')
    .set((eb) => ({ attempts: eb.fn('greatest', [eb('attempts', '-', 1), eb.lit(0)]) }))
    .where('key', '=', key)
    .execute();
}

/** Ends a counter's streak: its next attempt is a first one. */
export async function forgetAttempts(db: Executor, key: string) {
  await db.deleteFrom('rateLimits').where('key', '=', key).execute();
}

/** Drops counters with no attempt since `before` (forgotten by every policy). */
export const deleteRateLimitsBefore = async (db: Executor, before: Date) =>
  Number(
    (await db.deleteFrom('rateLimits').where('lastAttemptAt', '<=', before).executeTakeFirst())
      .numDeletedRows,
  );
