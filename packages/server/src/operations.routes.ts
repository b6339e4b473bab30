import * as api from '@svc/contract';
import type { AppContext } from './context.js';
import { isMigrated, ping } from './db/migrate.js';
import type { Router } from './http/router.js';

/** `isStarted`: whether this process's start-up work (migrations, the job queue) is done. */
export function mountOperationsRoutes(
  router: Router,
  ctx: AppContext,
  isStarted: () => boolean = () => true,
) {
  let openapiDocument: Record<string, unknown> | undefined;

  router.mount(api.healthz, async () => ({ status: 'ok' as const }));

  router.mount(api.readyz, async (_, c) => {
    const db = ctx.database.db.withoutPlugins();
    const database = await ping(db).then(
      () => true,
      () => false,
    );
    const migrations = database && (await isMigrated(db).catch(() => false));
    const started = isStarted();
    const ready = database && migrations && started;
    const body = {
      status: ready ? ('ready' as const) : ('not_ready' as const),
      checks: { database, migrations, started },
    };
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
