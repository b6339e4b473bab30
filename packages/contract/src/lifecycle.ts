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

/**
 * A user action accepted in the request (clone and open: Agents only). A snapshot or a restore
 * is accepted at once and then runs in the background as the machine's `diskOperation`.
 */
export type MachineChangeAction =
  | 'changeBilling'
  | 'transfer'
  | 'clone'
  | 'open'
  | 'resize'
  | 'snapshot'
  | 'restoreSnapshot';

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

/**
 * Groupings of the states, each a table over every state: a new state does not compile until
 * each grouping says where it belongs. `statesWhere` lists a grouping's members.
 */
export type StateGrouping = Readonly<Record<MachineState, boolean>>;

/** The states of `grouping`, in `MachineState`'s order. */
export const statesWhere = (grouping: StateGrouping): MachineState[] =>
  MachineState.options.filter((state) => grouping[state]);

/** A machine no job is working on and that has a server: where changes are accepted. */
export const SETTLED = {
  provisioning: false,
  running: true,
  stopping: false,
  stopped: true,
  starting: false,
  restarting: false,
  destroying: false,
  error: false,
} as const satisfies StateGrouping;

/** A machine whose server exists and stays while it is in the state (its firewall can change). */
export const HAS_SERVER = {
  provisioning: false,
  running: true,
  stopping: true,
  stopped: true,
  starting: true,
  restarting: true,
  destroying: false,
  error: false,
} as const satisfies StateGrouping;

/**
 * A machine that takes a new token pushed to it now: not one being made (it gets the token
 * then) nor one being removed.
 */
export const TAKES_TOKEN_PUSH = {
  provisioning: false,
  running: true,
  stopping: true,
  stopped: true,
  starting: true,
  restarting: true,
  destroying: false,
  error: true,
} as const satisfies StateGrouping;

/**
 * The rate a metered machine is charged at in each state (docs/billing.md): `running` while it
 * runs or a move keeps its server busy, `paused` while stopped (its server still holds a disk and
 * an address), nothing while provisioning, destroying or in error.
 */
export const CHARGE_RATE = {
  provisioning: null,
  running: 'running',
  stopping: 'running',
  stopped: 'paused',
  starting: 'running',
  restarting: 'running',
  destroying: null,
  error: null,
} as const satisfies Readonly<Record<MachineState, 'running' | 'paused' | null>>;

const SETTLED_STATES = statesWhere(SETTLED);

/** The states each immediate change accepts. */
export const CHANGES: Readonly<Record<MachineChangeAction, readonly MachineState[]>> = {
  changeBilling: SETTLED_STATES,
  transfer: SETTLED_STATES,
  clone: SETTLED_STATES,
  // A gateway ticket into the Agent's editor and terminal.
  open: ['running'],
  // New limits take effect at the next boot; the driver changes them on a server that is off.
  resize: ['stopped'],
  // Running where the driver snapshots a running disk (Incus, Hetzner, local), else stopped.
  snapshot: SETTLED_STATES,
  // The disk is overwritten: nothing may be running on it. The machine stays stopped.
  restoreSnapshot: ['stopped'],
};

/**
 * What a snapshot or restore in flight (the machine's `diskOperation`) refuses with 409, in any
 * state: every move and every change of the disk or its owner. Billing and `open` go on.
 */
export const REFUSED_DURING_DISK_OPERATION: readonly MachineAction[] = [
  'start',
  'stop',
  'restart',
  'destroy',
  'transfer',
  'clone',
  'resize',
  'snapshot',
  'restoreSnapshot',
];

/** States a job is working on; the dashboard polls while a machine is in one. */
export const TRANSIENT = {
  provisioning: true,
  running: false,
  stopping: true,
  stopped: false,
  starting: true,
  restarting: true,
  destroying: true,
  error: false,
} as const satisfies StateGrouping;

/** The states `action` accepts. */
export function acceptingStates(action: MachineAction): readonly MachineState[] {
  return action in MOVES
    ? MOVES[action as MachineMoveAction].from
    : CHANGES[action as MachineChangeAction];
}

/**
 * Whether a machine in `state` accepts `action`: the one question the server's guarded moves and
 * the dashboard's buttons both ask. (An Agent being cloned also refuses the moves marked
 * `refusedWhileCloning`, and a machine with a `diskOperation` those in
 * `REFUSED_DURING_DISK_OPERATION`; neither is a state, so the server checks them apart.)
 */
export function canApply(action: MachineAction, state: MachineState): boolean {
  return acceptingStates(action).includes(state);
}

export const isTransient = (state: MachineState): boolean => TRANSIENT[state];
