import { AsyncLocalStorage } from 'node:async_hooks';

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
    await previous;
    return release;
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
