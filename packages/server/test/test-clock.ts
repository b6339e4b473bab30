import type { Clock } from '../src/adapters/clock.js';

/**
 * Real time plus an offset the test controls: time passes as usual (so ordering and durations
 * are real), and `advance` jumps ahead (expiries, timeouts) without waiting.
 */
export class TestClock implements Clock {
  #offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.#offsetMs);
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}
