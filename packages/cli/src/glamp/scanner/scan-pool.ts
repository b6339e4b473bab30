import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ScanFlag } from '@svc/contract';
import { scanBytes } from './scan.js';

type Result = ScanFlag[] | 'skipped';

/** Bytes handed to the threads and not yet answered: bounds memory on a large home. */
const MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;

/**
 * Scans files on worker threads (one per core, at most 4), round-robin, so scanning runs beside
 * the copying and hashing of the main thread. `size: 0` scans in this thread (tests, tiny jobs).
 */
export class ScanPool {
  readonly #workers: Worker[] = [];
  readonly #waiting = new Map<
    number,
    { resolve: (r: Result) => void; reject: (e: unknown) => void; bytes: number }
  >();
  #next = 0;
  #inFlight = 0;
  #drained: (() => void)[] = [];

  constructor(size = Math.min(4, availableParallelism())) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL('./scan-worker.mjs', import.meta.url));
      worker.on('message', ({ id, result }: { id: number; result: Result }) => {
        const job = this.#waiting.get(id);
        if (!job) return;
        this.#waiting.delete(id);
        this.#inFlight -= job.bytes;
        job.resolve(result);
        if (this.#inFlight < MAX_IN_FLIGHT_BYTES)
          for (const wake of this.#drained.splice(0)) wake();
      });
      // A thread that dies fails the scan: a file must never pass unscanned silently.
      worker.on('error', (error) => {
        for (const job of this.#waiting.values()) job.reject(error);
        this.#waiting.clear();
      });
      this.#workers.push(worker);
    }
  }

  /** Resolves once the threads can take more bytes: callers await it before `scan`. */
  async ready(): Promise<void> {
    while (this.#inFlight >= MAX_IN_FLIGHT_BYTES) {
      await new Promise<void>((resolve) => this.#drained.push(resolve));
    }
  }

  /** Resolves when the file is scanned. */
  scan(file: string, bytes: Uint8Array): Promise<Result> {
    if (this.#workers.length === 0) return Promise.resolve(scanBytes(file, bytes));
    const id = this.#next++;
    const worker = this.#workers[id % this.#workers.length] as Worker;
    this.#inFlight += bytes.length;
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject, bytes: bytes.length });
      // Copied, not transferred: small Buffers share one slab that must stay usable here.
      worker.postMessage({ id, file, bytes });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
