import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import type { JobQueue } from '../jobs/queue.js';
import { applyMove } from '../lifecycle/machine-actions.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import type { Notices } from '../notices/notices.service.js';
import * as repo from './agents.repo.js';

/** Idle Agents the sweep reads per statement. */
const IDLE_PAGE_SIZE = 500;

export interface IdleStopDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  /** How long one of `idleStopMinutes`' minutes is (`config.idleStop.unitMs`). */
  readonly unitMs: number;
  /** The account's owners and admins are told of an idle stop (at most daily per Agent). */
  readonly notices: Pick<Notices, 'agentIdleStopped'>;
  /** The edge drops its route to a stopped Agent in this process. */
  readonly forgetRoute?: (subdomain: string) => void;
}

/**
 * Stops every running Agent nobody has used for its `idleStopMinutes`, as a person's stop would
 * (the same guarded move, usage rollover and job), with `stoppedReason` `idle` and the audit
 * event `agent.idle_stop`. Answers how many it stopped.
 */
export async function stopIdleAgents(deps: IdleStopDeps): Promise<number> {
  const readAt = deps.clock.now();
  let stopped = 0;
  let afterId: string | null = null;
  for (;;) {
    const page = { at: readAt, unitMs: deps.unitMs, afterId, limit: IDLE_PAGE_SIZE };
    const ids = await repo.pageOfIdleAgentIds(deps.database.db, page);
    for (const id of ids) if (await stopIfIdle(deps, id)) stopped += 1;
    if (ids.length < IDLE_PAGE_SIZE) return stopped;
    afterId = ids.at(-1) ?? null;
  }
}

/** The idle stop of one Agent, if it is still idle now; `true` when it was stopped. */
async function stopIfIdle(deps: IdleStopDeps, agentId: string): Promise<boolean> {
  const stopped = await deps.database.transaction(async (tx) => {
    const at = deps.clock.now();
    const agent = await repo.lockIfIdle(tx, agentId, at, deps.unitMs);
    if (!agent) return undefined;
    const context = { jobs: deps.jobs, machine: AGENT, at, userId: null };
    const moved = await applyMove(tx, context, agent, 'stop', {
      notCloning: true,
      also: { stoppedReason: 'idle' },
    });
    await recordAuditEvent(
      tx,
      {
        accountId: agent.accountId,
        actorUserId: null,
        action: 'agent.idle_stop',
        resourceKind: 'agent',
        resourceId: agent.id,
        data: {
          idleStopMinutes: agent.idleStopMinutes,
          lastActivityAt: agent.lastActivityAt?.toISOString() ?? null,
        },
      },
      at,
    );
    await deps.notices.agentIdleStopped(tx, agent);
    return moved;
  });
  if (stopped) deps.forgetRoute?.(stopped.subdomain);
  return stopped !== undefined;
}
