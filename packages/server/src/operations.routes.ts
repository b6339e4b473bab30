import * as api from '@svc/contract';
import type { AppContext } from './context.js';
import { isMigrated, ping } from './db/migrate.js';
import type { Router } from './http/router.js';

/** `/readyz` reads the process's one readiness (`ctx.readiness`) and asks the database. */
export function mountOperationsRoutes(router: Router, ctx: AppContext) {
  let openapiDocument: Record<string, unknown> | undefined;

  router.mount(api.healthz, async () => ({ status: 'ok' as const }));

  router.mount(api.readyz, async (_, c) => {
    const { ready, body } = await ctx.readiness.report(async () => {
      const db = ctx.database.db.withoutPlugins();
      const database = await ping(db).then(
        () => true,
        () => false,
      );
      const migrations = database && (await isMigrated(db).catch(() => false));
      return { database, migrations };
    });
    return ready ? body : c.json(body, 503);
  });

  router.mount(api.openapi, async () => {
    openapiDocument ??= api.buildOpenApiDocument(api.allEndpoints, {
      title: 'svc control plane',
      version: '1',
      serverUrl: ctx.config.http.publicUrl,
    });
    return openapiDocument;
  });
}
