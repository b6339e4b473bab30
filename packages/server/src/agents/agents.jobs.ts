import type { AgentState } from '@svc/contract';
import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { closeUsage, rolloverUsage } from '../billing/usage.js';
import type { Database } from '../db/database.js';
import { defineJob, type JobRun } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { AGENT_MOVES, type AgentAction, PROVISION_MOVE } from './agent-lifecycle.js';
import { meteredAgent } from './agent-view.js';
import * as repo from './agents.repo.js';

export interface AgentJobsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly compute: ComputeDriver;
  readonly log: Logger;
  /** The environment an Agent's machine gets (service URL, Agent id, HMAC token). */
  readonly bootstrapEnv: (agent: { id: string; tokenGen: number }) => Record<string, string>;
}

const Payload = z.object({ agentId: z.uuid() });

/** A start, stop, restart or destroy still unfinished after this long has failed for good. */
export const STUCK_AFTER_MS = 60 * 60_000;

/**
 * The jobs that complete Agent moves. Each is idempotent: it re-reads the Agent and does nothing
 * when it is no longer in the state the job was enqueued for, and every completion is a guarded
 * move out of that state, so a late or repeated job cannot undo a newer one.
 */
export function agentJobs(deps: AgentJobsDeps) {
  const { database, clock, compute, log } = deps;

  /** Moves `from` → `to` (recording usage) in one transaction; false if the Agent had moved on. */
  const complete = (
    agentId: string,
    from: AgentState,
    to: AgentState,
    statusReason: string | null = null,
  ) =>
    database.transaction(async (tx) => {
      const now = clock.now();
      const row = await repo.transitionAgent(tx, agentId, {
        from: [from],
        to,
        at: now,
        statusReason,
      });
      if (!row) return false;
      await rolloverUsage(tx, meteredAgent(row), now);
      // Out of provisioning, a clone's disk is copied or never will be: its source is free.
      if (from === 'provisioning') await repo.releaseCloneSource(tx, agentId);
      return true;
    });

  /** A driver failure: retried, and on the last attempt recorded as `error` with a reason. */
  async function failed(
    agentId: string,
    via: AgentState,
    reason: string,
    error: unknown,
    run: JobRun,
  ) {
    log.warn({ agentId, err: error, isLastAttempt: run.isLastAttempt }, `agent ${reason}`);
    if (!run.isLastAttempt) throw error;
    await complete(agentId, via, 'error', reason);
  }

  /** Provisioning past its deadline: `error` with `provisioning_timeout`, the server removed. */
  async function timeOut(agentId: string) {
    if (await complete(agentId, 'provisioning', 'error', 'provisioning_timeout')) {
      log.warn({ agentId }, 'provisioning timed out; removing what the driver created');
      await compute.deleteServer(agentId);
    }
  }

  const move = (action: Exclude<AgentAction, 'destroy'>, call: (id: string) => Promise<void>) => {
    const { via, done } = AGENT_MOVES[action];
    return defineJob({
      name: `agent.${action}`,
      payload: Payload,
      async run({ agentId }, run) {
        const agent = await repo.findAgent(database.db, agentId);
        if (agent?.state !== via) return;
        try {
          await call(agentId);
        } catch (error) {
          return failed(agentId, via, `${action}_failed`, error, run);
        }
        await complete(agentId, via, done as AgentState);
      },
    });
  };

  return [
    defineJob({
      name: 'agent.provision',
      payload: Payload,
      expireInSeconds: 900,
      async run({ agentId }, run) {
        const agent = await repo.findAgent(database.db, agentId);
        if (agent?.state !== PROVISION_MOVE.via) return;
        // Picked up after its deadline (e.g. the service was down): provisioning has timed out.
        if (agent.provisionDeadlineAt && agent.provisionDeadlineAt <= clock.now()) {
          return timeOut(agentId);
        }
        try {
          await compute.createServer({
            id: agent.id,
            size: agent.size,
            region: agent.region,
            ...(agent.cloneSourceId && { sourceServerId: agent.cloneSourceId }),
            bootstrapEnv: deps.bootstrapEnv(agent),
            labels: { managedBy: 'svc', kind: 'agent', agentId: agent.id },
          });
        } catch (error) {
          await failed(agentId, PROVISION_MOVE.via, 'provisioning_failed', error, run);
          if (run.isLastAttempt) await compute.deleteServer(agentId);
          return;
        }
        const moved = await complete(agentId, PROVISION_MOVE.via, PROVISION_MOVE.done);
        // Timed out (or destroyed) meanwhile: what was just created belongs to nobody.
        if (!moved) await compute.deleteServer(agentId);
      },
    }),

    defineJob({
      name: 'agent.provision-timeout',
      payload: Payload,
      async run({ agentId }) {
        const agent = await repo.findAgent(database.db, agentId);
        if (agent?.state !== 'provisioning') return;
        if (agent.provisionDeadlineAt && agent.provisionDeadlineAt > clock.now()) return;
        await timeOut(agentId);
      },
    }),

    defineJob({
      name: 'agents.reconcile',
      payload: z.object({}),
      cron: '*/5 * * * *',
      retryLimit: 0,
      async run() {
        // Servers the driver has that no Agent owns: left by a crash between the provider's
        // work and our commit, or by hand. They would run (and cost) forever.
        // Includes servers of Agents whose provisioning failed or timed out, in case that
        // cleanup failed too.
        const servers = await compute.listServers({ managedBy: 'svc', kind: 'agent' });
        const owned = new Set(
          await repo.idsOwningServers(
            database.db,
            servers.map((s) => s.id),
          ),
        );
        for (const server of servers.filter((s) => !owned.has(s.id))) {
          log.warn({ serverId: server.id }, 'removing a server no Agent owns');
          await compute.deleteServer(server.id);
        }
        // A move whose job died without reaching its last attempt (crash, expiry) would leave
        // the Agent in a transient state no user action accepts: give it up as `error`.
        const now = clock.now();
        const cutoff = new Date(now.getTime() - STUCK_AFTER_MS);
        for (const [action, move] of Object.entries(AGENT_MOVES)) {
          await database.transaction(async (tx) => {
            for (const row of await repo.failStuck(
              tx,
              move.via,
              `${action}_timeout`,
              cutoff,
              now,
            )) {
              log.warn({ agentId: row.id, state: move.via }, 'move timed out');
              await rolloverUsage(tx, meteredAgent(row), now);
            }
          });
        }
      },
    }),

    move('start', (id) => compute.powerOn(id)),
    move('stop', (id) => compute.powerOff(id)),
    move('restart', (id) => compute.reboot(id)),

    defineJob({
      name: 'agent.destroy',
      payload: Payload,
      async run({ agentId }, run) {
        const agent = await repo.findAgent(database.db, agentId);
        if (agent?.state !== 'destroying') return;
        try {
          await compute.deleteServer(agentId);
        } catch (error) {
          return failed(agentId, 'destroying', 'destroy_failed', error, run);
        }
        await database.transaction(async (tx) => {
          if (await repo.removeAgent(tx, agentId)) await closeUsage(tx, agentId, clock.now());
        });
      },
    }),
  ];
}
