import type { FaultSet } from './faults.js';
import { type ActionRecord, isoTime, type Store } from './state.js';

export interface ActionEffects {
  /** Runs when the action ends in `success`. */
  onSuccess?(): void;
  /** Runs when the action ends in `error` (a fault from `failActions`). */
  onError?(): void;
  /** An action this one follows (create_server before start_server): its error is inherited. */
  after?: ActionRecord;
}

/** The action object as Hetzner answers it. */
export interface ActionJson {
  id: number;
  command: string;
  status: 'running' | 'success' | 'error';
  progress: number;
  started: string;
  finished: string | null;
  resources: { id: number; type: string }[];
  error: { code: string; message: string } | null;
}

/**
 * Runs actions on real time: each stays `running` for `actionMs` (progress rising with the
 * time spent), then ends and applies its effects, so a client has to wait as with Hetzner.
 */
export class ActionEngine {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: Store,
    private readonly faults: FaultSet,
    private readonly actionMs: number,
  ) {}

  start(
    command: string,
    resources: { id: number; type: string }[],
    effects: ActionEffects = {},
  ): ActionRecord {
    const action: ActionRecord = {
      id: this.store.nextId(),
      command,
      status: 'running',
      startedMs: Date.now(),
      finishedMs: null,
      resources,
      error: null,
    };
    this.store.actions.set(action.id, action);
    // Decided now, so a test's `failActions` applies to the next action started.
    const failure = this.faults.takeActionFailure(command);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action.finishedMs = Date.now();
      const error = effects.after?.status === 'error' ? effects.after.error : failure;
      if (error) {
        action.status = 'error';
        action.error = { code: error.code, message: error.message };
        effects.onError?.();
      } else {
        action.status = 'success';
        effects.onSuccess?.();
      }
    }, this.actionMs);
    this.timers.add(timer);
    return action;
  }

  json(action: ActionRecord): ActionJson {
    const running = action.status === 'running';
    const elapsed = Date.now() - action.startedMs;
    return {
      id: action.id,
      command: action.command,
      status: action.status,
      // Below 100 while running: 100 is for finished actions only.
      progress: running ? Math.min(99, Math.floor((elapsed / this.actionMs) * 100)) : 100,
      started: isoTime(action.startedMs),
      finished: action.finishedMs === null ? null : isoTime(action.finishedMs),
      resources: action.resources.map((r) => ({ id: r.id, type: r.type })),
      error: action.error,
    };
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
