import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';

export function mountBillingRoutes(router: Router, ctx: AppContext) {
  const { billing } = ctx;
  router.mount(api.getPrices, async () => ctx.config.billing.prices.book);
  router.mount(api.listSlots, async ({ params }, c) => billing.listSlots(c.var.user.id, params.id));
  router.mount(api.getUsage, async ({ params }, c) => billing.usage(c.var.user.id, params.id));
  router.mount(api.deleteSlot, async ({ params }, c) => {
    await billing.removeSlot(c.var.user.id, params.id, params.slotId);
    return undefined;
  });
}
