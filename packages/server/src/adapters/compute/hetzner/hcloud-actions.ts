import { type HcloudClient, HcloudError } from './hcloud-client.js';

/** Hetzner's record of one piece of work on a resource. */
export interface Action {
  readonly id: number;
  readonly command: string;
  readonly status: 'running' | 'success' | 'error';
  readonly progress: number;
  readonly error: { readonly code: string; readonly message: string } | null;
}

interface Waiter {
  readonly ids: Set<number>;
  readonly since: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** `GET /actions` takes this many ids a call (as hcloud-go asks it). */
const IDS_PER_CALL = 25;
const FIRST_POLL_MS = 500;
const MAX_POLL_MS = 5_000;
/** No action of ours takes this long; one that does is reported, not waited on forever. */
const GIVE_UP_MS = 15 * 60_000;

/**
 * Waits for actions to end, for every caller of a process together: one loop polls all running
 * actions in batches (`GET /actions?id=…`), at growing intervals while nothing changes, so twenty
 * machines being made cost about as many requests as one.
 */
export class ActionWaiter {
  readonly #waiters = new Set<Waiter>();
  #loop: Promise<void> | undefined;

  constructor(private readonly client: HcloudClient) {}

  /** Resolves when every one succeeded; rejects with the first one's error that failed. */
  wait(actions: readonly Action[]): Promise<void> {
    for (const action of actions) {
      if (action.status === 'error') return Promise.reject(actionError(action));
    }
    const ids = new Set(actions.filter((a) => a.status === 'running').map((a) => a.id));
    if (ids.size === 0) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      this.#waiters.add({ ids, since: Date.now(), resolve, reject });
    });
    this.#loop ??= this.#poll();
    return done;
  }

  /** Ends (and lets the next `wait` start another) in the same turn it sees no waiter left. */
  async #poll(): Promise<void> {
    let interval = FIRST_POLL_MS;
    for (;;) {
      if (this.#waiters.size === 0) {
        this.#loop = undefined;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
      const polled = [...this.#waiters];
      const ids = [...new Set(polled.flatMap((w) => [...w.ids]))];
      let changed = false;
      try {
        for (let i = 0; i < ids.length; i += IDS_PER_CALL) {
          const { actions } = await this.client.request<{ actions: Action[] }>('GET', '/actions', {
            query: { id: ids.slice(i, i + IDS_PER_CALL) },
          });
          for (const action of actions) changed = this.#settle(action) || changed;
        }
      } catch (error) {
        // The client retried what can pass; this cannot: the waiters asked about hear it.
        for (const waiter of polled) {
          waiter.reject(error as Error);
          this.#waiters.delete(waiter);
        }
        continue;
      }
      for (const waiter of this.#waiters) {
        if (Date.now() - waiter.since < GIVE_UP_MS) continue;
        waiter.reject(new HcloudError(0, 'timeout', `actions ${[...waiter.ids]} still running`));
        this.#waiters.delete(waiter);
      }
      interval = changed ? FIRST_POLL_MS : Math.min(MAX_POLL_MS, interval * 1.5);
    }
  }

  /** Hands one action's end to its waiters; true when it had ended. */
  #settle(action: Action): boolean {
    if (action.status === 'running') return false;
    for (const waiter of this.#waiters) {
      if (!waiter.ids.has(action.id)) continue;
      if (action.status === 'error') {
        waiter.reject(actionError(action));
        this.#waiters.delete(waiter);
        continue;
      }
      waiter.ids.delete(action.id);
      if (waiter.ids.size === 0) {
        waiter.resolve();
        this.#waiters.delete(waiter);
      }
    }
    return true;
  }
}

const actionError = (action: Action) =>
  new HcloudError(
    422,
    action.error?.code ?? 'action_failed',
    `action ${action.command} failed: ${action.error?.message ?? 'no reason given'}`,
  );
