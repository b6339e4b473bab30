import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { ProcessorUnavailable } from './payment-processor.js';

/**
 * How long a lease lasts unless released: longer than one reconcile's calls to the processor
 * (a few, each bounded by the SDK's 15 s timeout), so only a holder that died lets it run out.
 */
const LEASE_MS = 120_000;
const POLL_MS = 100;

/** Takes the account's lease unless someone holds it; true if taken. */
async function takeLease(db: Executor, accountId: string, holder: string, now: Date) {
  const heldUntil = new Date(now.getTime() + LEASE_MS);
  const taken = await db
    .insertInto('billingLeases')
    .values({ accountId, holder, heldUntil })
    .onConflict((c) =>
      c
        .column('accountId')
        .doUpdateSet({ holder, heldUntil })
        .where('billingLeases.heldUntil', '<=', now),
    )
    .returning('holder')
    .executeTakeFirst();
  return taken !== undefined;
}

/**
 * Runs `work` while holding the account's billing lease: one process at a time, across replicas,
 * makes the processor's subscription follow the account (two at once could each make a
 * subscription, or write quantities out of order). Waits up to `waitMs` for another holder, then
 * throws `ProcessorUnavailable` (a job retries; activation answers 503).
 */
export async function withBillingLease<T>(
  deps: { database: Database; clock: Clock },
  accountId: string,
  waitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const { db } = deps.database;
  const holder = randomUUID();
  const deadline = Date.now() + waitMs;
  while (!(await takeLease(db, accountId, holder, deps.clock.now()))) {
    if (Date.now() >= deadline) {
      throw new ProcessorUnavailable("another process is updating the account's subscription");
    }
    await sleep(POLL_MS);
  }
  try {
    return await work();
  } finally {
    await db
      .deleteFrom('billingLeases')
      .where('accountId', '=', accountId)
      .where('holder', '=', holder)
      .execute();
  }
}
