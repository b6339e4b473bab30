import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import { logChange } from '../lifecycle/machine-log.js';

export function mountAgentsRoutes(router: Router, ctx: AppContext) {
  const { agents } = ctx;
  const log = ctx.log.root.child({ subsystem: 'agents' });

  router.mount(api.getSelfAgent, async (_, c) => agents.getSelf(c.var.agent));
  // Creating a machine (adoption and clones included) waits for a verified e-mail where the
  // operator requires one.
  const { requireVerifiedEmail } = ctx.accounts;
  router.mount(api.createAgent, async ({ body }, c) => {
    requireVerifiedEmail(c.var.user);
    return agents.create(c.var.user.id, body);
  });
  router.mount(api.listAgents, async ({ query }, c) => agents.list(c.var.user.id, query.accountId));
  router.mount(api.getAgent, async ({ params }, c) => agents.get(c.var.user.id, params.id));
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
  router.mount(api.openAgentGateway, async ({ params }, c) =>
    agents.openGateway(c.var.user.id, params.id),
  );
  router.mount(api.deleteAgent, async ({ params }, c) =>
    agents.act(c.var.user.id, params.id, 'destroy'),
  );
}
