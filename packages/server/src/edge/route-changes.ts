import type { Database } from '../db/database.js';
import { notify } from '../db/notifications.js';
import type { Logger } from '../logger.js';
import type { EdgeRoutes } from './edge-routes.js';

/** The channel on which processes tell each other an Agent's route changed. */
export const ROUTE_CHANGES_CHANNEL = 'svc_edge_routes';

/**
 * An Agent's route changed (it stopped, moved account, was destroyed): every process's edge
 * must drop what it cached. This process drops it at once; the others hear it through
 * PostgreSQL (`LISTEN`), within a round trip of the commit. Should the listening connection be
 * lost, everything cached is dropped when it is back, since changes may have been missed.
 */
export function createRouteChanges(deps: {
  database: Database;
  routes: Pick<EdgeRoutes, 'forget' | 'clear'>;
  log: Logger;
}) {
  return {
    /** Tells every process (after the change's commit) that `subdomain`'s route changed. */
    announce(subdomain: string): void {
      deps.routes.forget(subdomain);
      notify(deps.database.db, ROUTE_CHANGES_CHANNEL, subdomain).catch((err: unknown) =>
        // The other edges' entries still end with their TTL (`ROUTE_TTL_MS`).
        deps.log.warn({ err, subdomain }, 'telling other processes of a route change failed'),
      );
    },

    /** Starts hearing the other processes' announcements. */
    start: (): Promise<void> =>
      deps.database.notifications.listen(
        ROUTE_CHANGES_CHANNEL,
        (subdomain) => deps.routes.forget(subdomain),
        () => deps.routes.clear(),
      ),
  };
}

export type RouteChanges = ReturnType<typeof createRouteChanges>;
