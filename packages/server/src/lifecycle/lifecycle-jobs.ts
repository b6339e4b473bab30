import { type MachineMoveAction, type MachineState, MOVES, PROVISION_MOVE } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import {
  type ComputeDriver,
  ComputeFailure,
  type CreateServerSpec,
  type ServerInfo,
} from '../adapters/compute/compute-driver.js';
import { closeUsage, rolloverUsage } from '../billing/usage.repo.js';
import type { Database, Executor } from '../db/database.js';
import { handleJob, type JobDefinition, type JobRun } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import type { Notices } from '../notices/notices.service.js';
import type { MachineColumns } from './machine.repo.js';
import * as repo from './machine.repo.js';
import { type MachineKind, machineIdOf } from './machine-kinds.js';
import { type FinishedMove, logMove } from './machine-log.js';
import { awaitAnswer, type MachineReadiness } from './machine-readiness.js';
import { reconcileMachines } from './machine-reconcile.js';
import { removeAllSnapshots } from './machine-snapshots.js';

/** What the lifecycle jobs do differently for one kind of machine. */
export interface MachineJobHooks<R extends MachineColumns> {
  readonly kind: MachineKind;
  createSpec(row: R): CreateServerSpec;
  /** Runs `create` with the tree the machine's home starts with, when it has one (adoptions). */
  withHomeSeed?<T>(row: R, create: (homeSeed: string | undefined) => Promise<T>): Promise<T>;
  /** In the transaction that moves the machine out of `provisioning` (`server` when it made it). */
  leftProvisioning?(tx: Executor, row: R, server: ServerInfo | undefined): Promise<void>;
  /** What else the reconciler repairs for this kind (Plain VMs: firewalls the provider lost). */
  reconcile?(): Promise<void>;
}

export interface LifecycleJobsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly compute: ComputeDriver;
  readonly log: Logger;
  /** Tells the account's owners and admins, in the move's transaction, of a move into `error`. */
  readonly notices: Pick<Notices, 'machineFailed'>;
  /**
   * What makes a machine of this kind usable (an Agent's gateway answers through the edge's
   * connection, a Plain VM's SSH server its banner), which every move into `running` waits for.
   */
  readonly readiness: MachineReadiness;
  /** Told of each move once it ended (`/metrics`: durations, failures by reason). */
  readonly moveFinished?: (move: FinishedMove) => void;
}

/**
 * The jobs that complete machine moves. Each is idempotent: it re-reads the machine and does
 * nothing when it is no longer in the state the job was enqueued for, and every completion is a
 * guarded move out of that state, so a late or repeated job cannot undo a newer one.
 */
export function lifecycleJobs<R extends MachineColumns>(
  deps: LifecycleJobsDeps,
  machine: MachineJobHooks<R>,
): JobDefinition<unknown>[] {
  const { database, clock, compute, log } = deps;
  const { kind } = machine;
  const { table, idKey } = kind;
  const find = (id: string) => repo.findMachine<R>(database.db, table, id);
  const { readiness } = deps;
  // A run that waits for the machine to answer may take the whole wait, and then some.
  const waitingExpiry = Math.min(86_400, Math.ceil(readiness.timeoutMs / 1000) + 600);

  /**
   * After the driver's part of a move into `running`: waits until the machine answers as its
   * users reach it, so `running` means usable (the spec's "server up, editor reachable").
   */
  const answer = async (row: R, run: JobRun, budgetMs: number, server?: ServerInfo) => {
    const startedAt = performance.now();
    const outcome = await awaitAnswer({
      probe: readiness.probe,
      machine: row,
      server,
      readServer: () => compute.getServer(row.id),
      isStillWaiting: async () => (await find(row.id))?.state === row.state,
      budgetMs,
      signal: run.signal,
    });
    const waitedMs = Math.round(performance.now() - startedAt);
    log.debug({ [idKey]: row.id, state: row.state, outcome, waitedMs }, 'waited for an answer');
    return outcome;
  };

  /**
   * Moves the machine from the transient state its job read (`before`) to `to`, recording usage,
   * in one transaction, and logs the finished move once it committed (`logMove`: every move's
   * end comes through here or the destroy below). False if the machine had moved on.
   */
  const complete = async (
    before: R,
    to: MachineState,
    statusReason: string | null = null,
    server?: ServerInfo,
  ) => {
    const from = before.state;
    const at = clock.now();
    const moved = await database.transaction(async (tx) => {
      const row = await repo.transitionMachine<R>(tx, table, before.id, {
        from: [from],
        to,
        at,
        statusReason,
      });
      if (!row) return false;
      await rolloverUsage(tx, repo.meteredMachine(kind.kind, row), at);
      if (from === 'provisioning') await machine.leftProvisioning?.(tx, row, server);
      if (to === 'error') await deps.notices.machineFailed(tx, kind.kind, row);
      return true;
    });
    if (moved) deps.moveFinished?.(logMove(log, kind, before, { to, at, statusReason }));
    return moved;
  };

  /** A driver failure: retried, and on the last attempt recorded as `error` with a reason. */
  async function failed(row: R, reason: string, error: unknown, run: JobRun) {
    log.warn({ [idKey]: row.id, err: error, isLastAttempt: run.isLastAttempt }, `${reason}`);
    if (!run.isLastAttempt) throw error;
    await complete(row, 'error', reason);
  }

  /** Provisioning past its deadline: `error` with `provisioning_timeout`, the server removed. */
  async function timeOut(row: R) {
    if (await complete(row, 'error', 'provisioning_timeout')) {
      log.debug({ [idKey]: row.id }, 'removing what the driver created for it');
      await compute.deleteServer(row.id);
    }
  }

  const move = (
    action: Exclude<MachineMoveAction, 'destroy'>,
    call: (id: string) => Promise<void>,
  ) => {
    const { via, done } = MOVES[action];
    const isToRunning = done === 'running';
    return handleJob(
      kind.jobs[action],
      async (payload, run) => {
        const id = machineIdOf(kind, payload);
        const row = await find(id);
        if (row?.state !== via) return;
        try {
          await call(id);
        } catch (error) {
          return failed(row, `${action}_failed`, error, run);
        }
        // A machine that never answers is not usable: trying the move again would wait again.
        if (isToRunning && (await answer(row, run, readiness.timeoutMs)) === 'timed_out') {
          await complete(row, 'error', `${action}_timeout`);
          return;
        }
        await complete(row, done as MachineState);
      },
      isToRunning ? { expireInSeconds: waitingExpiry } : {},
    );
  };

  return [
    handleJob(
      kind.jobs.provision,
      async (payload, run) => {
        const id = machineIdOf(kind, payload);
        const row = await find(id);
        if (row?.state !== PROVISION_MOVE.via) return;
        // Picked up after its deadline (e.g. the service was down): provisioning has timed out.
        if (row.provisionDeadlineAt && row.provisionDeadlineAt <= clock.now()) return timeOut(row);
        const create = (homeSeed: string | undefined) =>
          compute.createServer({ ...machine.createSpec(row), ...(homeSeed && { homeSeed }) });
        let server: ServerInfo;
        try {
          server = machine.withHomeSeed
            ? await machine.withHomeSeed(row, create)
            : await create(undefined);
        } catch (error) {
          // A failure the driver names (a missing image) will not pass by trying again.
          const named = error instanceof ComputeFailure;
          const final = named ? { ...run, isLastAttempt: true } : run;
          await failed(row, named ? error.reason : 'provisioning_failed', error, final);
          if (final.isLastAttempt) await compute.deleteServer(id);
          return;
        }
        // Within the provisioning deadline: past it, the machine is given up as timed out.
        const budgetMs = row.provisionDeadlineAt
          ? row.provisionDeadlineAt.getTime() - clock.now().getTime()
          : readiness.timeoutMs;
        if ((await answer(row, run, budgetMs, server)) === 'timed_out') {
          return timeOut(row);
        }
        const moved = await complete(row, PROVISION_MOVE.done, null, server);
        // Timed out (or destroyed) meanwhile: what was just created belongs to nobody.
        if (!moved) await compute.deleteServer(id);
      },
      { expireInSeconds: waitingExpiry },
    ),

    handleJob(kind.jobs.provisionTimeout, async (payload) => {
      const id = machineIdOf(kind, payload);
      const row = await find(id);
      if (row?.state !== 'provisioning') return;
      if (row.provisionDeadlineAt && row.provisionDeadlineAt > clock.now()) return;
      await timeOut(row);
    }),

    handleJob(kind.jobs.reconcile, () => reconcileMachines(deps, machine)),

    move('start', (id) => compute.powerOn(id)),
    move('stop', (id) => compute.powerOff(id)),
    move('restart', (id) => compute.reboot(id)),

    handleJob(kind.jobs.destroy, async (payload, run) => {
      const id = machineIdOf(kind, payload);
      const row = await find(id);
      if (row?.state !== 'destroying') return;
      try {
        // Its snapshots go first: a driver need not remove them with the server.
        await removeAllSnapshots(deps, row);
        await compute.deleteServer(id);
      } catch (error) {
        return failed(row, 'destroy_failed', error, run);
      }
      const at = clock.now();
      const removed = await database.transaction(async (tx) => {
        if (!(await repo.removeMachine(tx, table, id))) return false;
        await closeUsage(tx, id, at);
        return true;
      });
      if (removed) deps.moveFinished?.(logMove(log, kind, row, { to: 'destroyed', at }));
    }),
  ];
}
