import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';

export function mountVaultRoutes(router: Router, ctx: AppContext) {
  const { vault } = ctx;
  router.mount(api.addVaultEntry, async ({ body }, c) => vault.add(c.var.user.id, body));
  router.mount(api.listVaultEntries, async ({ query }, c) =>
    vault.list(c.var.user.id, query.accountId),
  );
  router.mount(api.deleteVaultEntry, async ({ params }, c) => {
    await vault.remove(c.var.user.id, params.id);
    return undefined;
  });
}
