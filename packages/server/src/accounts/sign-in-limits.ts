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

/** Throws `rate_limited` (with `Retry-After`) when either counter is full for this window. */
export async function assertSignInAllowed(db: Executor, email: string, address: string, now: Date) {
  const keys = keysFor(email, address);
  const rows = await db
    .selectFrom('rateLimits')
    .selectAll()
    .where(
      'key',
      'in',
      keys.map((k) => k.key),
    )
    .execute();
  for (const row of rows) {
    const limit = keys.find((k) => k.key === row.key)?.limit ?? 0;
    const resetsAt = row.windowStartedAt.getTime() + SIGN_IN_LIMITS.windowMs;
    if (row.attempts >= limit && resetsAt > now.getTime()) {
      const retryAfter = Math.ceil((resetsAt - now.getTime()) / 1000);
      throw new AppError('rate_limited', {
        message: 'too many failed sign-ins',
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
  }
}

/** Counts one failed sign-in against both counters; a counter whose window has passed restarts. */
export async function recordFailedSignIn(db: Executor, email: string, address: string, now: Date) {
  const windowStart = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);
  for (const { key } of keysFor(email, address)) {
    await db
      .insertInto('rateLimits')
      .values({ key, windowStartedAt: now, attempts: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          attempts: sql`case when rate_limits.window_started_at <= ${windowStart} then 1 else rate_limits.attempts + 1 end`,
          windowStartedAt: sql`case when rate_limits.window_started_at <= ${windowStart} then ${now} else rate_limits.window_started_at end`,
        }),
      )
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
