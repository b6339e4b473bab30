import { TAKES_TOKEN_PUSH } from '@svc/contract';
import { z } from 'zod';
import type { AdoptionService } from '../bundles/adoption.service.js';
import type { AgentRow } from '../db/schema.js';
import { defineJob, handleJob } from '../jobs/job.js';
import { type LifecycleJobsDeps, lifecycleJobs } from '../lifecycle/lifecycle-jobs.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import * as repo from './agents.repo.js';

export interface AgentJobsDeps extends LifecycleJobsDeps {
  /** The environment an Agent's machine gets (service URL, Agent id, HMAC token). */
  readonly bootstrapEnv: (agent: { id: string; tokenGen: number }) => Record<string, string>;
  /** The homes of Agents adopted from a bundle. */
  readonly adoption: AdoptionService;
  /** Stops the Agents nobody used for their `idleStopMinutes` (`AgentsService.stopIdle`). */
  readonly stopIdle: () => Promise<number>;
}

/**
 * Every minute: stop running Agents nobody has used for their `idleStopMinutes`. Missed runs
 * are not made up; the next finds the same Agents.
 */
export const idleStop = defineJob({
  name: 'agents.idle-stop',
  payload: z.object({}),
  cron: '* * * * *',
  retryLimit: 0,
});

/** Hands a machine its Agent's current token (after a transfer or a regenerated token). */
export const pushToken = defineJob({
  name: 'agent.push-token',
  payload: z.object({ agentId: z.uuid() }),
  // A cloud machine takes a push only while it runs: a stopped one is tried again for hours
  // (15 s, doubling), so one started meanwhile gets it.
  retryLimit: 10,
  retryDelaySeconds: 15,
});

/** The jobs that complete Agent moves (`agent.provision`, `agent.start`, …, `agents.reconcile`). */
export const agentJobs = (deps: AgentJobsDeps) => [
  ...lifecycleJobs<AgentRow>(deps, {
    kind: AGENT,
    createSpec: (agent) => ({
      id: agent.id,
      size: agent.size,
      region: agent.region,
      ...(agent.cloneSourceId && { sourceServerId: agent.cloneSourceId }),
      bootstrapEnv: deps.bootstrapEnv(agent),
      labels: { managedBy: 'svc', kind: 'agent', agentId: agent.id },
    }),
    withHomeSeed: (agent, create) => deps.adoption.withHomeSeed(agent, create),
    leftProvisioning: async (tx, agent, server) => {
      // Out of provisioning, a clone's disk is copied or never will be: its source is free.
      await repo.releaseCloneSource(tx, agent.id);
      // The adopter's credentials are in the home now, or never will be: they are not kept.
      await repo.forgetAdoptionCredentials(tx, agent.id);
      // Counted once the adopted home exists; who adopted is not recorded on the bundle.
      if (server && agent.adoptedVersionId) await deps.adoption.counted(tx, agent.adoptedVersionId);
    },
  }),
  handleJob(idleStop, async () => {
    const stopped = await deps.stopIdle();
    if (stopped > 0) deps.log.info({ stopped }, 'stopped idle Agents');
  }),
  handleJob(pushToken, async ({ agentId }) => {
    // Whatever the generation was when this was enqueued, the current one is what lands: of
    // two pushes running in either order, the machine ends up with the newest token.
    const agent = await repo.findAgent(deps.database.db, agentId);
    // A machine being made gets the token then, one being removed none; a failure here is
    // retried.
    if (!agent || agent.provider !== deps.compute.name || !TAKES_TOKEN_PUSH[agent.state]) return;
    await deps.compute.setBootstrapEnv(agentId, deps.bootstrapEnv(agent));
  }),
];
