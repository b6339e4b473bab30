import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';

export function mountAuditRoutes(router: Router, ctx: AppContext) {
  router.mount(api.listAuditEvents, async ({ params, query }, c) =>
    ctx.audit.list(c.var.user.id, params.id, query),
  );
}
