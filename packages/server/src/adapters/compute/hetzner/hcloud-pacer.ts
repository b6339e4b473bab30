/** Time as the pacer sees it; tests may drive it. */
export interface PacerClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemPacerClock: PacerClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Hetzner's published refill: one request a second (3,600 an hour per project). */
const DEFAULT_REFILL_PER_MS = 1 / 1000;

/**
 * Paces requests to Hetzner Cloud's rate limit, a token bucket per project. The bucket is
 * estimated from each answer's `RateLimit-Limit`, `-Remaining` and `-Reset` headers and spent
 * here for every request sent, so many concurrent callers wait their turn in this process
 * instead of meeting a storm of 429s. Estimates err low: a wait too long costs a moment, a
 * request too early costs a 429 and a retry.
 */
export class RatePacer {
  // One request at a time until the first answer tells the bucket's size: a burst of callers at
  // start could otherwise empty a small bucket before any header came back.
  #limit = 1;
  #refillPerMs = DEFAULT_REFILL_PER_MS;
  #tokens = 1;
  #observed = false;
  #updatedAt: number;
  /** Callers take tokens one after another, in the order they asked. */
  #turn: Promise<void> = Promise.resolve();

  constructor(private readonly clock: PacerClock = systemPacerClock) {
    this.#updatedAt = clock.now();
  }

  /** Resolves when one request may be sent, and counts it as sent. */
  acquire(): Promise<void> {
    const turn = this.#turn.then(async () => {
      const wait = (1 - this.#refill()) / this.#refillPerMs;
      if (wait > 0) await this.clock.sleep(Math.ceil(wait));
      this.#refill();
      this.#tokens -= 1;
    });
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  /** Learns the bucket from an answer's headers; a 429 means it is empty whatever they say. */
  observe(headers: Headers, status: number): void {
    const now = this.clock.now();
    const limit = Number(headers.get('ratelimit-limit'));
    const remaining = Number(headers.get('ratelimit-remaining'));
    const reset = Number(headers.get('ratelimit-reset'));
    if (limit > 0 && Number.isFinite(remaining) && headers.has('ratelimit-remaining')) {
      this.#refill();
      this.#limit = limit;
      const deficit = limit - remaining;
      // Reset is whole seconds: reading it one second late keeps the estimated rate low.
      const untilFullMs = reset * 1000 + 1000 - now;
      if (deficit >= 2 && untilFullMs > 0) this.#refillPerMs = deficit / untilFullMs;
      // Other requests in flight may have spent more since: the lower count wins (but the first
      // answer replaces the guess made before any).
      this.#tokens = this.#observed ? Math.min(this.#tokens, remaining) : remaining;
      this.#observed = true;
    }
    if (status === 429) this.#tokens = Math.min(this.#tokens, 0);
  }

  /** Tokens now, after refilling since the last look. */
  #refill(): number {
    const now = this.clock.now();
    this.#tokens = Math.min(
      this.#limit,
      this.#tokens + (now - this.#updatedAt) * this.#refillPerMs,
    );
    this.#updatedAt = now;
    return this.#tokens;
  }
}
