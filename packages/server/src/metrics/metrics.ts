import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { countJobs, countMachines, type LabelCount } from './metrics.repo.js';

export type SignInFailure = 'invalid_credentials' | 'rate_limited';
/** `refreshed`; `unavailable` (OAuth provider unreachable or not configured, kept for a retry);
 * `dead` (the OAuth provider refused the refresh token: the connection is in error); `stale` (another
 * process refreshed first, retried). */
export type RefreshOutcome = 'refreshed' | 'unavailable' | 'dead' | 'stale';

/**
 * What the service counts, in a registry of its own (one per context, so test contexts never
 * share a counter). Features see only the one method they call; `GET /metrics` reads the registry.
 */
export interface Metrics {
  readonly registry: Registry;
  /** One finished HTTP request; `route` is the matched pattern (`/api/agents/:id`), never a path. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  signInFailed(reason: SignInFailure): void;
  tokenRefresh(provider: string, outcome: RefreshOutcome): void;
  bundlePublished(): void;
}

/**
 * Builds the registry. Counters and the request histogram count in this process; the job and
 * machine gauges are read from the database at scrape time (one query each), so every replica
 * reports the whole service's.
 */
export function createMetrics(deps: { database: Database; log: Logger }): Metrics {
  const registry = new Registry();
  const requests = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP requests by method, matched route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const signInFailures = new Counter({
    name: 'svc_sign_in_failures_total',
    help: 'Failed sign-ins: wrong e-mail or password, or refused by the rate limit',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const tokenRefreshes = new Counter({
    name: 'svc_token_refreshes_total',
    help: 'OAuth token refreshes of app connections by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  const bundlePublishes = new Counter({
    name: 'svc_bundle_publishes_total',
    help: 'Bundle versions published (publish completed)',
    registers: [registry],
  });

  /** Replaces a gauge's series with a fresh count; a failed query leaves it empty and says so. */
  const fill = async (
    gauge: Gauge<string>,
    first: string,
    count: (db: Database['db']) => Promise<LabelCount[]>,
  ) => {
    gauge.reset();
    try {
      for (const row of await count(deps.database.db)) {
        gauge.set({ [first]: row.label, state: row.state }, row.n);
      }
    } catch (err) {
      deps.log.warn({ err, metric: first }, 'metric not collected');
    }
  };
  new Gauge({
    name: 'svc_jobs',
    help: 'Background jobs by queue and state (pg-boss), at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      await fill(this, 'queue', countJobs);
    },
  });
  new Gauge({
    name: 'svc_machines',
    help: 'Agents and Plain VMs by kind and state, at scrape time',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    async collect() {
      await fill(this, 'kind', countMachines);
    },
  });

  return {
    registry,
    observeRequest: ({ method, route, status }, seconds) =>
      requests.observe({ method, route, status: String(status) }, seconds),
    signInFailed: (reason) => signInFailures.inc({ reason }),
    tokenRefresh: (provider, outcome) => tokenRefreshes.inc({ provider, outcome }),
    bundlePublished: () => bundlePublishes.inc(),
  };
}
