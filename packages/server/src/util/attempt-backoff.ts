/**
 * Growing delays between attempts (sign-ins, sign-ups, SSH logins): a few pass freely, then each
 * one must wait twice as long after the previous as the one before it did, up to a cap. Nothing
 * is ever locked for longer than the cap, and a counter only slows down whoever it counts (an
 * address, or an account from one address), so a storm from elsewhere cannot lock a user out.
 */
export interface BackoffPolicy {
  /** Attempts that need no wait. */
  readonly free: number;
  /** The wait after the first attempt past `free`; it doubles with each further attempt. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A streak with no attempt for this long is forgotten (longer than `maxDelayMs`). */
  readonly forgetMs: number;
}

/** A counter's state: attempts in the current streak and when the last one was counted. */
export interface AttemptStreak {
  readonly attempts: number;
  readonly lastAttemptAt: number;
}

/** The wait after the `attempts`-th attempt before the next one may be counted. */
export function delayAfter(policy: BackoffPolicy, attempts: number): number {
  if (attempts < policy.free) return 0;
  // Capped before it can overflow: the exponent stays small.
  const doublings = Math.min(attempts - policy.free, 40);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** doublings);
}

const isForgotten = (policy: BackoffPolicy, streak: AttemptStreak, nowMs: number) =>
  nowMs - streak.lastAttemptAt >= policy.forgetMs;

/** Milliseconds until the counter takes another attempt; 0 when it takes one now. */
export function waitMs(policy: BackoffPolicy, streak: AttemptStreak | undefined, nowMs: number) {
  if (!streak || isForgotten(policy, streak, nowMs)) return 0;
  return Math.max(0, streak.lastAttemptAt + delayAfter(policy, streak.attempts) - nowMs);
}

/** The counter after one more attempt at `nowMs`. */
export function countAttempt(
  policy: BackoffPolicy,
  streak: AttemptStreak | undefined,
  nowMs: number,
): AttemptStreak {
  const attempts = !streak || isForgotten(policy, streak, nowMs) ? 1 : streak.attempts + 1;
  return { attempts, lastAttemptAt: nowMs };
}

/** `Retry-After` seconds for a wait: whole seconds, at least one. */
export const retryAfterSeconds = (wait: number) => Math.max(1, Math.ceil(wait / 1000));

/**
 * Backoff counters held in this process's memory, for a server without a database (a local Plain
 * VM's SSH server). Forgotten streaks are dropped as the map grows, so it stays bounded by the
 * keys seen within `forgetMs`.
 */
export class AttemptLimiter {
  readonly #streaks = new Map<string, AttemptStreak>();

  constructor(
    readonly policy: BackoffPolicy,
    readonly now: () => number = Date.now,
  ) {}

  waitMs(key: string): number {
    return waitMs(this.policy, this.#streaks.get(key), this.now());
  }

  count(key: string): void {
    const nowMs = this.now();
    if (this.#streaks.size >= 10_000) this.#prune(nowMs);
    this.#streaks.set(key, countAttempt(this.policy, this.#streaks.get(key), nowMs));
  }

  #prune(nowMs: number) {
    for (const [key, streak] of this.#streaks) {
      if (isForgotten(this.policy, streak, nowMs)) this.#streaks.delete(key);
    }
  }
}
