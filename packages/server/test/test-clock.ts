import type { Clock } from '../src/adapters/clock.js';

/** A clock that moves only when the test says so. */
export class TestClock implements Clock {
  #now: number;

  constructor(start: Date = new Date()) {
    this.#now = start.getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}
