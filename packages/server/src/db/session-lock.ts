import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolStatus } from './pool-status.js';

/**
 * Serializes use of PGlite's single database session. Whoever holds the lock owns the session
 * (a whole transaction, or one statement); everyone else waits in arrival order.
 *
 * Code running inside `withTransaction` that reaches for the database outside its transaction
 * would wait for a lock its own transaction holds: a silent deadlock on PGlite (and a second
 * connection on PostgreSQL). `markTransaction` lets `acquire` turn that into an immediate error.
 */
export class SessionLock {
  #tail: Promise<void> = Promise.resolve();
  readonly #inTransaction = new AsyncLocalStorage<true>();
  /** Holder and waiters: acquired and not yet released, or still waiting. */
  #queued = 0;
  #waits = 0;
  #waitSeconds = 0;

  /** The one session as a pool of one, for `/metrics`. */
  status(): PoolStatus {
    return {
      max: 1,
      open: 1,
      inUse: this.#queued > 0 ? 1 : 0,
      waiting: Math.max(0, this.#queued - 1),
      waits: this.#waits,
      waitSeconds: this.#waitSeconds,
    };
  }

  async acquire(): Promise<() => void> {
    if (this.#inTransaction.getStore()) {
      throw new Error(
        'Database used outside the current transaction from inside it: pass the transaction on',
      );
    }
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => held);
    const waits = this.#queued > 0;
    this.#queued += 1;
    const startedAt = performance.now();
    await previous;
    if (waits) {
      this.#waits += 1;
      this.#waitSeconds += (performance.now() - startedAt) / 1000;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#queued -= 1;
      release();
    };
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  markTransaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.#inTransaction.run(true, fn);
  }
}
