import type { Clock } from '../src/adapters/clock.js';

/**
 * Real time plus an offset the test controls: time passes as usual (so ordering and durations
 * are real), and `advance` jumps ahead (expiries, timeouts) without waiting. `freeze` stops it
 * where it is, for tests that must know the exact instant of every change (ledgers).
 */
export class TestClock implements Clock {
  #offsetMs = 0;
  #frozenAt: number | undefined;

  now(): Date {
    return new Date(this.#frozenAt ?? Date.now() + this.#offsetMs);
  }

  advance(ms: number): void {
    if (this.#frozenAt === undefined) this.#offsetMs += ms;
    else this.#frozenAt += ms;
  }

  /** From now on time moves only by `advance`. */
  freeze(): void {
    this.#frozenAt = this.now().getTime();
  }
}
