import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import { type BackoffPolicy, delayAfter } from '../util/attempt-backoff.js';
import type { MachineColumns } from './machine.repo.js';

/**
 * One try at reaching `machine`'s running server as its users do (an Agent's gateway through the
 * edge's connection, a Plain VM's SSH server), ended by `signal`: `no_address` when the server
 * names no place to try (its driver may name one later), `unprobed` when the service cannot
 * try from where it is (a Plain VM's firewall that does not admit everyone to SSH): then the
 * driver's word that it runs stands.
 */
export type ServerProbe = (
  server: ServerInfo,
  signal: AbortSignal,
  machine: MachineColumns,
) => Promise<'answered' | 'silent' | 'no_address' | 'unprobed'>;

/** What a move into `running` waits for, and how long. */
export interface MachineReadiness {
  readonly probe: ServerProbe;
  /** `PROVISION_TIMEOUT_MS` (the spec's 5 minutes): start and restart wait as long. */
  readonly timeoutMs: number;
}

/** 50 ms after the first try, then twice as long after each, at most a second apart. */
const RETRY: BackoffPolicy = {
  free: 0,
  baseDelayMs: 50,
  maxDelayMs: 1_000,
  forgetMs: Number.POSITIVE_INFINITY,
};
/** One try that has not answered by then is taken as silent. */
const TRY_TIMEOUT_MS = 3_000;

export type AwaitedAnswer = 'answered' | 'unprobed' | 'moved' | 'timed_out';

/**
 * Tries `probe` until the server answers, `budgetMs` runs out (`timed_out`), or the machine
 * leaves the state the move waits in (`moved`: nothing is waiting for it any more). The server
 * is read again only while it names no address, so a cloud driver is not asked at every try.
 * An aborted `signal` (the job's, at shutdown or expiry) throws, and the job is retried.
 */
export async function awaitAnswer(options: {
  readonly probe: ServerProbe;
  readonly machine: MachineColumns;
  /** The server as the driver just answered it, if it did (`createServer`). */
  readonly server?: ServerInfo | undefined;
  readonly readServer: () => Promise<ServerInfo | undefined>;
  readonly isStillWaiting: () => Promise<boolean>;
  readonly budgetMs: number;
  readonly signal: AbortSignal;
}): Promise<AwaitedAnswer> {
  const { probe, signal } = options;
  const deadline = performance.now() + options.budgetMs;
  let server = options.server;
  for (let attempt = 0; ; attempt += 1) {
    server ??= await options.readServer();
    const tryMs = Math.ceil(Math.max(100, Math.min(TRY_TIMEOUT_MS, deadline - performance.now())));
    const tried = server
      ? await probe(server, AbortSignal.any([signal, AbortSignal.timeout(tryMs)]), options.machine)
      : 'no_address';
    if (tried === 'answered' || tried === 'unprobed') return tried;
    if (tried === 'no_address') server = undefined;
    signal.throwIfAborted();
    if (!(await options.isStillWaiting())) return 'moved';
    const left = deadline - performance.now();
    if (left <= 0) return 'timed_out';
    // The last try falls on the deadline itself.
    await sleep(Math.ceil(Math.min(delayAfter(RETRY, attempt), left)), undefined, { signal });
  }
}
