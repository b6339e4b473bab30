import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';

/** Failed sign-ins allowed per window, by e-mail address and by client address. */
export const SIGN_IN_LIMITS = { windowMs: 15 * 60_000, perEmail: 10, perAddress: 50 } as const;

// E-mail addresses are hashed so the table holds no personal data.
const keysFor = (email: string, address: string) => [
  {
    key: `sign-in:email:${createHash('sha256').update(email).digest('hex')}`,
    limit: SIGN_IN_LIMITS.perEmail,
  },
  { key: `sign-in:address:${address}`, limit: SIGN_IN_LIMITS.perAddress },
];

/**
 * Counts a sign-in attempt before the password is checked, atomically per counter, and throws
 * `rate_limited` (with `Retry-After`) once either counter is over its limit. Counting first is what
 * keeps a parallel burst from slipping past the limit; a successful sign-in gives its attempt back
 * (`refundSignInAttempt`), so only failures use the allowance.
 */
export async function takeSignInAttempt(db: Executor, email: string, address: string, now: Date) {
  const windowStart = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);
  for (const { key, limit } of keysFor(email, address)) {
    const row = await db
      .insertInto('rateLimits')
      .values({ key, windowStartedAt: now, attempts: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          attempts: sql`case when rate_limits.window_started_at <= ${windowStart} then 1 else rate_limits.attempts + 1 end`,
          windowStartedAt: sql`case when rate_limits.window_started_at <= ${windowStart} then ${now} else rate_limits.window_started_at end`,
        }),
      )
      .returning(['attempts', 'windowStartedAt'])
      .executeTakeFirstOrThrow();
    if (row.attempts > limit) {
      const resetsAt = row.windowStartedAt.getTime() + SIGN_IN_LIMITS.windowMs;
      const retryAfter = Math.max(1, Math.ceil((resetsAt - now.getTime()) / 1000));
      throw new AppError('rate_limited', {
        message: 'too many failed sign-ins',
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
  }
}

/** Gives a successful sign-in's attempt back to both counters. */
export async function refundSignInAttempt(db: Executor, email: string, address: string) {
  for (const { key } of keysFor(email, address)) {
    await db
      .updateTable('rateLimits')
      .set({ attempts: sql`greatest(attempts - 1, 0)` })
      .where('key', '=', key)
      .execute();
  }
}

export const deleteStaleRateLimits = async (db: Executor, now: Date) =>
  Number(
    (
      await db
        .deleteFrom('rateLimits')
        .where('windowStartedAt', '<=', new Date(now.getTime() - SIGN_IN_LIMITS.windowMs))
        .executeTakeFirst()
    ).numDeletedRows,
  );
