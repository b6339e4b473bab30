import type { ReadyStatus } from '@svc/contract';
import type { z } from 'zod';

/**
 * Where this process is in its life, as `/readyz` and the requests that wait for the start see it:
 * - `loading`: listening, while the service's modules load and its parts are built;
 * - `starting`: its start-up work (migrations, the job queue, the first reconciles) under way;
 * - `ready`: that work done;
 * - `failed`: that work (or the building before it) failed: the process ends;
 * - `stopping`: a signal came; its parts are closing.
 */
export type ReadinessState = 'loading' | 'starting' | 'ready' | 'failed' | 'stopping';

/** The moves allowed from each state; any other is a bug in the caller, refused loudly. */
const NEXT: Record<ReadinessState, readonly ReadinessState[]> = {
  loading: ['starting', 'failed', 'stopping'],
  // A signal during the start: the process stops without waiting for the start to end.
  starting: ['ready', 'failed', 'stopping'],
  ready: ['stopping'],
  failed: ['stopping'],
  stopping: [],
};

export class ReadinessMoveRefused extends Error {
  constructor(
    readonly from: ReadinessState,
    readonly to: ReadinessState,
  ) {
    super(`readiness cannot move from ${from} to ${to}`);
  }
}

/** What the database says, asked only once it is open (by `/readyz` in the app). */
export type DatabaseChecks = () => Promise<{ database: boolean; migrations: boolean }>;

/**
 * The one readiness of a process: built first by the composition root, moved by it, and read by
 * every answer that depends on it (`/readyz` before and after the app exists, the app's gate that
 * holds requests during the start).
 */
export class Readiness {
  #state: ReadinessState = 'loading';
  /** Whether the start finished: a process stopped during its start never was started. */
  #reachedReady = false;
  readonly #started = Promise.withResolvers<void>();

  constructor() {
    // A failed start is reported by whoever ran it; this keeps the rejection from counting as
    // unhandled when no request waited for it.
    this.#started.promise.catch(() => {});
  }

  get state(): ReadinessState {
    return this.#state;
  }

  /** The start-up work is done (and stays done while the process stops). */
  get started(): boolean {
    return this.#reachedReady;
  }

  /** Moves to `to`, or throws `ReadinessMoveRefused` when `NEXT` does not allow it. */
  move(to: Exclude<ReadinessState, 'failed'>): void {
    this.#guard(to);
    this.#state = to;
    if (to === 'ready') {
      this.#reachedReady = true;
      this.#started.resolve();
    }
  }

  /** Moves to `failed`: requests that wait for the start get `error`. */
  fail(error: unknown): void {
    this.#guard('failed');
    this.#state = 'failed';
    this.#started.reject(error);
  }

  /**
   * What a request waits for before it is answered: while the start runs, its end (rejecting
   * with its error if it fails, and after it failed); nothing otherwise (`undefined`, so the hot
   * path awaits nothing), also before the start: a service composed but never started, as in
   * tests, answers as it is.
   */
  whenServing(): Promise<void> | undefined {
    return this.#state === 'starting' || this.#state === 'failed'
      ? this.#started.promise
      : undefined;
  }

  /**
   * `/readyz`'s answer. Without `databaseChecks` (nothing is open yet) the database counts as
   * unreachable and unmigrated.
   */
  async report(
    databaseChecks?: DatabaseChecks,
  ): Promise<{ readonly ready: boolean; readonly body: z.infer<typeof ReadyStatus> }> {
    const { database, migrations } = databaseChecks
      ? await databaseChecks()
      : { database: false, migrations: false };
    const started = this.started;
    // Not ready as soon as a signal comes, so the load balancer drains this process first.
    const stopping = this.#state === 'stopping';
    const ready = database && migrations && started && !stopping;
    return {
      ready,
      body: {
        status: ready ? 'ready' : 'not_ready',
        checks: { database, migrations, started, stopping },
      },
    };
  }

  #guard(to: ReadinessState): void {
    if (!NEXT[this.#state].includes(to)) throw new ReadinessMoveRefused(this.#state, to);
  }
}
