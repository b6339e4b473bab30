import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';
import { INVOICE_PAGE_CSP } from './invoice-page.html.js';

export function mountBillingRoutes(router: Router, ctx: AppContext) {
  const { billing } = ctx;
  router.mount(api.getPrices, async () => ctx.config.billing.prices.book);
  router.mount(api.listSlots, async ({ params }, c) => billing.listSlots(c.var.user.id, params.id));
  router.mount(api.getUsage, async ({ params }, c) => billing.usage(c.var.user.id, params.id));
  router.mount(api.deleteSlot, async ({ params }, c) => {
    await billing.removeSlot(c.var.user.id, params.id, params.slotId);
    return undefined;
  });
  router.mount(api.getUpcomingInvoice, async ({ params }, c) =>
    billing.upcomingInvoice(c.var.user.id, params.id),
  );
  router.mount(api.listInvoices, async ({ params }, c) =>
    billing.listInvoices(c.var.user.id, params.id),
  );
  router.mount(api.getInvoice, async ({ params }, c) =>
    billing.getInvoice(c.var.user.id, params.id, params.number),
  );
  router.mount(api.getInvoicePage, async ({ params }, c) => {
    const html = await billing.invoicePage(c.var.user.id, params.id, params.number);
    c.header('Content-Security-Policy', INVOICE_PAGE_CSP);
    return c.html(html);
  });
}
