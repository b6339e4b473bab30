import type { AgentState } from '@svc/contract';

/** A user action on an existing Agent, as the spec's Moves table names them. */
export type AgentAction = 'start' | 'stop' | 'restart' | 'destroy';

export interface AgentMove {
  /** States the action may start from; any other answers 409 `invalid_state`. */
  readonly from: readonly AgentState[];
  /** The transient state the Agent is in while the job works. */
  readonly via: AgentState;
  /** Where the job leaves it on success; `null`: the Agent is removed. */
  readonly done: AgentState | null;
  /** Refused while the Agent's disk is being copied for a clone. */
  readonly refusedWhileCloning: boolean;
}

/** The spec's Moves table (and decisions.md's completions), as data. */
export const AGENT_MOVES: Readonly<Record<AgentAction, AgentMove>> = {
  start: { from: ['stopped'], via: 'starting', done: 'running', refusedWhileCloning: false },
  stop: { from: ['running'], via: 'stopping', done: 'stopped', refusedWhileCloning: true },
  restart: { from: ['running'], via: 'restarting', done: 'running', refusedWhileCloning: true },
  destroy: {
    from: ['running', 'stopped', 'error'],
    via: 'destroying',
    done: null,
    refusedWhileCloning: true,
  },
};

/** Creation: `provisioning` until the server is up, then `running`. */
export const PROVISION_MOVE = { via: 'provisioning', done: 'running' } as const;

/** States a job is working on; the dashboard polls while an Agent is in one. */
export const TRANSIENT_STATES: readonly AgentState[] = [
  'provisioning',
  'starting',
  'stopping',
  'restarting',
  'destroying',
];

export function canApply(action: AgentAction, state: AgentState): boolean {
  return AGENT_MOVES[action].from.includes(state);
}

export const isTransient = (state: AgentState) => TRANSIENT_STATES.includes(state);

/**
 * Every (from, to) pair the lifecycle can produce: user moves, job completions, failures to
 * `error` from transient states. Used to check that nothing ever lands elsewhere.
 */
export function allowedTransitions(): ReadonlySet<string> {
  const pairs = new Set<string>();
  const add = (from: AgentState, to: AgentState) => pairs.add(`${from}->${to}`);
  for (const move of Object.values(AGENT_MOVES)) {
    for (const from of move.from) add(from, move.via);
    if (move.done) add(move.via, move.done);
  }
  add(PROVISION_MOVE.via, PROVISION_MOVE.done);
  for (const transient of TRANSIENT_STATES) add(transient, 'error');
  return pairs;
}
