import { type MachineState, MOVES } from '@svc/contract';
import type { Logger } from '../logger.js';
import type { MoveMeasure } from '../metrics/metrics.js';
import type { MachineColumns } from './machine.repo.js';
import type { MachineKind } from './machine-kinds.js';

/**
 * The move a machine in a transient state is making: `create` or `clone` while provisioning (a
 * clone's row names its source), else the action whose transient state it is (`stopping`: stop).
 */
export function moveOf(row: MachineColumns & { readonly cloneSourceId?: string | null }): string {
  if (row.state === 'provisioning') return row.cloneSourceId ? 'clone' : 'create';
  return Object.entries(MOVES).find(([, move]) => move.via === row.state)?.[0] ?? row.state;
}

/** Where a finished move left the machine: a state, or gone (a destroy). */
export type MoveEnd = MachineState | 'destroyed';

/**
 * A finished move as `/metrics` counts it (`LifecycleJobsDeps.moveFinished`); `seconds` is
 * unknown for a move given up as stuck (only its lower bound is).
 */
export type FinishedMove = MoveMeasure;

/**
 * The one line a finished move logs, once its transaction has committed: at info when it reached
 * its end, at warn when it ended in `error`. It names the machine, its account and driver, the
 * move, and how long it took: from when the machine entered the transient state (`before`, the
 * row its job read) to `at`. Ids only: nothing the machine's users wrote, no credentials.
 * Returns the move as `/metrics` counts it.
 */
export function logMove(
  log: Logger,
  kind: MachineKind,
  before: MachineColumns,
  end: {
    readonly to: MoveEnd;
    readonly at: Date;
    readonly statusReason?: string | null;
    /** When the move began, where `before.updatedAt` no longer says (a stuck move's lower bound). */
    readonly since?: Date;
  },
): FinishedMove {
  const move = moveOf(before);
  const line = {
    [kind.idKey]: before.id,
    accountId: before.accountId,
    move,
    from: before.state,
    to: end.to,
    driver: before.provider,
    durationMs: Math.max(0, end.at.getTime() - (end.since ?? before.updatedAt).getTime()),
    ...(end.statusReason && { statusReason: end.statusReason }),
  };
  if (end.to === 'error') log.warn(line, `${kind.noun} ${move} failed: ${end.statusReason}`);
  else log.info(line, `${kind.noun} ${move}: ${end.to}`);
  return {
    kind: kind.kind,
    move,
    driver: before.provider,
    failed: end.to === 'error',
    statusReason: end.statusReason ?? null,
    seconds: end.since ? undefined : line.durationMs / 1000,
  };
}

/**
 * The one line of a change a request makes at once (a transfer, a billing switch), logged by its
 * route once the service's transaction committed: the machine, the account it is in now, the
 * driver, what changed and how long the request's work took.
 */
export async function logChange<T>(
  log: Logger,
  kind: MachineKind,
  change: { readonly id: string; readonly move: 'transfer' | 'billing' | 'resize' },
  work: () => Promise<T>,
  fieldsOf: (result: T) => Readonly<Record<string, unknown>>,
): Promise<T> {
  const startedAt = performance.now();
  const result = await work();
  const line = {
    [kind.idKey]: change.id,
    move: change.move,
    ...fieldsOf(result),
    durationMs: Math.round(performance.now() - startedAt),
  };
  log.info(line, `${kind.noun} ${change.move}`);
  return result;
}
