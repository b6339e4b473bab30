import { z } from 'zod';

/**
 * The states an Agent or a Plain VM is in; both kinds share them, and the moves below
 * (`docs/reference.md#lifecycle`).
 */
export const MachineState = z.enum([
  'provisioning',
  'running',
  'stopping',
  'stopped',
  'starting',
  'restarting',
  'destroying',
  'error',
]);
export type MachineState = z.infer<typeof MachineState>;

/** A user action that a job completes, through a transient state. */
export type MachineMoveAction = 'start' | 'stop' | 'restart' | 'destroy';

/** A user action that takes effect at once, in the request (clone and open: Agents only). */
export type MachineChangeAction = 'changeBilling' | 'transfer' | 'clone' | 'open';

/** Every user action on an existing machine whose acceptance depends on its state. */
export type MachineAction = MachineMoveAction | MachineChangeAction;

export interface MachineMove {
  /** States the action may start from; any other answers 409 `invalid_state`. */
  readonly from: readonly MachineState[];
  /** The transient state the machine is in while the job works. */
  readonly via: MachineState;
  /** Where the job leaves it on success; `null`: the machine is removed. */
  readonly done: MachineState | null;
  /** Refused while the machine's disk is being copied for a clone. */
  readonly refusedWhileCloning: boolean;
}

/** The Moves table, as data: the server's guarded updates and the dashboard's buttons read it. */
export const MOVES: Readonly<Record<MachineMoveAction, MachineMove>> = {
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

/** A machine no job is working on and that has a server: where changes are accepted. */
const SETTLED: readonly MachineState[] = ['running', 'stopped'];

/** The states each immediate change accepts. */
export const CHANGES: Readonly<Record<MachineChangeAction, readonly MachineState[]>> = {
  changeBilling: SETTLED,
  transfer: SETTLED,
  clone: SETTLED,
  // A gateway ticket into the Agent's editor and terminal.
  open: ['running'],
};

/** States a job is working on; the dashboard polls while a machine is in one. */
export const TRANSIENT_STATES: readonly MachineState[] = [
  'provisioning',
  'starting',
  'stopping',
  'restarting',
  'destroying',
];

/** The states `action` accepts. */
export function acceptingStates(action: MachineAction): readonly MachineState[] {
  return action in MOVES
    ? MOVES[action as MachineMoveAction].from
    : CHANGES[action as MachineChangeAction];
}

/**
 * Whether a machine in `state` accepts `action`: the one question the server's guarded moves and
 * the dashboard's buttons both ask. (An Agent being cloned also refuses the moves marked
 * `refusedWhileCloning`; that is not a state, so the server checks it apart.)
 */
export function canApply(action: MachineAction, state: MachineState): boolean {
  return acceptingStates(action).includes(state);
}

export const isTransient = (state: MachineState): boolean => TRANSIENT_STATES.includes(state);
