import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import { logChange } from '../lifecycle/machine-log.js';

export function mountAgentsRoutes(router: Router, ctx: AppContext) {
  const { agents } = ctx;
  const log = ctx.log.root.child({ subsystem: 'agents' });

  router.mount(api.getSelfAgent, async (_, c) => agents.getSelf(c.var.agent));
  // Open SSH sessions are a person at the machine, which only its gateway sees.
  router.mount(api.reportAgentActivity, async ({ body }, c) => {
    if (body.sshSessions > 0) ctx.agentActivity.touch(c.var.agent.agentId);
    return { reportEveryMs: ctx.agentActivity.intervalMs };
  });
  // Creating a machine (adoption and clones included) waits for a verified e-mail where the
  // operator requires one.
  const { requireVerifiedEmail } = ctx.accounts;
  router.mount(api.createAgent, async ({ body }, c) => {
    requireVerifiedEmail(c.var.user);
    return agents.create(c.var.user.id, body);
  });
  router.mount(api.listAgents, async ({ query }, c) => agents.list(c.var.user.id, query.accountId));
  router.mount(api.getAgent, async ({ params }, c) => agents.get(c.var.user.id, params.id));
  router.mount(api.updateAgent, async ({ params, body }, c) =>
    agents.update(c.var.user.id, params.id, body),
  );
  router.mount(api.startAgent, async ({ params }, c) =>
    agents.act(c.var.user.id, params.id, 'start'),
  );
  router.mount(api.stopAgent, async ({ params }, c) =>
    agents.act(c.var.user.id, params.id, 'stop'),
  );
  router.mount(api.restartAgent, async ({ params }, c) =>
    agents.act(c.var.user.id, params.id, 'restart'),
  );
  router.mount(api.cloneAgent, async ({ params, body }, c) => {
    requireVerifiedEmail(c.var.user);
    return agents.clone(c.var.user.id, params.id, body);
  });
  router.mount(api.transferAgent, async ({ params, body }, c) =>
    logChange(
      log,
      AGENT,
      { id: params.id, move: 'transfer' },
      () => agents.transfer(c.var.user.id, params.id, body.targetAccountId),
      (agent) => ({ accountId: agent.accountId, driver: agent.provider }),
    ),
  );
  router.mount(api.setAgentBilling, async ({ params, body }, c) =>
    logChange(
      log,
      AGENT,
      { id: params.id, move: 'billing' },
      () => agents.setBilling(c.var.user.id, params.id, body.billingType),
      (result) => ({ billingType: result.billingType, addedNewSlot: result.addedNewSlot }),
    ),
  );
  router.mount(api.resizeAgent, async ({ params, body }, c) =>
    logChange(
      log,
      AGENT,
      { id: params.id, move: 'resize' },
      () => agents.resize(c.var.user.id, params.id, body.size),
      (agent) => ({ size: agent.size }),
    ),
  );
  const { snapshots } = ctx;
  router.mount(api.agentSnapshots.list, async ({ params }, c) =>
    snapshots.list(AGENT, c.var.user.id, params.id),
  );
  router.mount(api.agentSnapshots.create, async ({ params, body }, c) =>
    snapshots.create(AGENT, c.var.user.id, params.id, body),
  );
  router.mount(api.agentSnapshots.restore, async ({ params }, c) =>
    snapshots.restore(AGENT, c.var.user.id, params.id, params.snapshotId),
  );
  router.mount(api.agentSnapshots.remove, async ({ params }, c) => {
    await snapshots.remove(AGENT, c.var.user.id, params.id, params.snapshotId);
    return undefined;
  });
  router.mount(api.openAgentGateway, async ({ params }, c) =>
    agents.openGateway(c.var.user.id, params.id),
  );
  const { agentPorts } = ctx;
  router.mount(api.listAgentPorts, async ({ params }, c) =>
    agentPorts.list(c.var.user.id, params.id),
  );
  router.mount(api.shareAgentPort, async ({ params, body }, c) =>
    agentPorts.share(c.var.user.id, params.id, params.port, body.share),
  );
  router.mount(api.unshareAgentPort, async ({ params }, c) => {
    await agentPorts.unshare(c.var.user.id, params.id, params.port);
    return undefined;
  });
  router.mount(api.openAgentPort, async ({ params, body }, c) =>
    agentPorts.open(
      { userId: c.var.user.id, opener: c.var.signedInBy },
      params.id,
      params.port,
      body.next,
    ),
  );
  router.mount(api.deleteAgent, async ({ params }, c) =>
    agents.act(c.var.user.id, params.id, 'destroy'),
  );
}
