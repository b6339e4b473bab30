import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';

export function mountBundlesRoutes(router: Router, ctx: AppContext) {
  const { publish, catalog, search } = ctx.bundles;
  const log = ctx.log.root.child({ subsystem: 'bundles' });
  router.mount(api.searchBundles, async ({ query }) => search.search(query));
  router.mount(api.createStaging, async ({ body }, c) => publish.createStaging(c.var.agent, body));
  router.mount(api.cancelStaging, async ({ params }, c) => {
    await publish.cancelStaging(c.var.agent, params.id);
    return undefined;
  });
  router.mount(api.getGlampStatus, async (_input, c) => publish.status(c.var.agent));
  router.mount(api.publishBundle, async ({ params, body }, c) =>
    publish.publish(c.var.agent, params.slug, body),
  );
  router.mount(api.completePublish, async ({ params, body }, c) => {
    const startedAt = performance.now();
    const published = await publish.complete(c.var.agent, params.slug, body.stagingId);
    // Once its transaction committed: the bundle, its new version, who published it.
    const { agentId, accountId } = c.var.agent;
    const durationMs = Math.round(performance.now() - startedAt);
    const { bundleId, version } = published;
    log.info({ bundleId, version, agentId, accountId, durationMs }, 'bundle published');
    return published;
  });
  router.mount(api.getBundle, async ({ params }) =>
    catalog.getBundle(params.accountSlug, params.name),
  );
  router.mount(api.listAccountBundles, async ({ params }, c) =>
    catalog.listAccountBundles(c.var.user.id, params.id),
  );
  router.mount(api.deleteBundle, async ({ params }, c) => {
    await catalog.deleteBundle(c.var.user.id, params.accountSlug, params.name);
    return undefined;
  });
  router.mount(api.deleteBundleVersion, async ({ params }, c) => {
    await catalog.deleteVersion(c.var.user.id, params.accountSlug, params.name, params.version);
    return undefined;
  });
}
