import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';

export function mountNoticesRoutes(router: Router, ctx: AppContext) {
  router.mount(api.getNoticePreferences, async (_, c) => ctx.notices.preferences(c.var.user.id));
  router.mount(api.updateNoticePreferences, async ({ body }, c) =>
    ctx.notices.setPreferences(c.var.user.id, body),
  );
}
