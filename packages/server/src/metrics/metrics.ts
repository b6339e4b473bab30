import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolCellStatus } from '../adapters/compute/compute-driver.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { countJobs, countMachines, type JobCount, type MachineCount } from './metrics.repo.js';

export type SignInFailure = 'invalid_credentials' | 'rate_limited';
/** `refreshed`; `unavailable` (OAuth provider unreachable or not configured, kept for a retry);
 * `dead` (the OAuth provider refused the refresh token: the connection is in error); `stale` (another
 * process refreshed first, retried). */
export type RefreshOutcome = 'refreshed' | 'unavailable' | 'dead' | 'stale';
/**
 * What a request for an app connection's token got: the stored token (`fresh`), a refreshed one
 * (`refreshed`), `503` (the provider could not refresh it now) or `410` (the connection is dead).
 */
export type TokenRequestOutcome = 'fresh' | 'refreshed' | '503' | '410';
/** One attempt of a job: `completed`; failed and `retried` later; `failed` for good (no retry left). */
export type JobRunOutcome = 'completed' | 'retried' | 'failed';
/** `applied`; `ignored` (nothing to do); `rejected` (bad signature or body); `failed` (retried by the processor). */
export type WebhookOutcome = 'applied' | 'ignored' | 'rejected' | 'failed';

/** A machine move that ended: how long it took (none when unknown) and why it failed. */
export interface MoveMeasure {
  readonly kind: string;
  /** `create`, `clone`, `start`, `stop`, `restart`, `destroy`. */
  readonly move: string;
  readonly driver: string;
  readonly failed: boolean;
  readonly statusReason: string | null;
  readonly seconds: number | undefined;
}

/** The edge's route cache: routes held now, and resolutions from it or from the database. */
export interface EdgeRouteStats {
  readonly cached: number;
  readonly hits: number;
  readonly misses: number;
}

/**
 * What the service counts, in a registry of its own (one per context, so test contexts never
 * share a counter): the one place that defines its metric objects. Features see only the one
 * method they call, mostly through wrappers the composition root puts around them
 * (`instrumentation.ts`); `GET /metrics` reads the registry. Every label's values are bounded:
 * route patterns, names from the code, providers, drivers, never ids, e-mails or URLs.
 */
export interface Metrics {
  readonly registry: Registry;
  /** One finished HTTP request; `route` is the matched pattern (`/api/agents/:id`), never a path. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  signInFailed(reason: SignInFailure): void;
  tokenRefresh(provider: string, outcome: RefreshOutcome): void;
  bundlePublished(): void;
  moveFinished(move: MoveMeasure): void;
  jobRun(queue: string, outcome: JobRunOutcome, seconds: number): void;
  tokenRequest(provider: string, outcome: TokenRequestOutcome): void;
  /** One call to an OAuth provider; `endpoint` is `token`, `userinfo`, `revocation` or `api`. */
  providerRequest(provider: string, endpoint: string, seconds: number): void;
  mail(transport: string, outcome: 'sent' | 'failed'): void;
  webhookEvent(type: string, outcome: WebhookOutcome): void;
  /** A request the edge answered (proxied or its own page), by status code (0: cut short). */
  edgeRequest(status: number): void;
}

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Machine moves take from a second (a local start) to many minutes (a cloud clone). */
const MOVE_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200];
const READINESS_STATES = ['loading', 'starting', 'ready', 'failed', 'stopping'];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];

/**
 * Builds the registry. Counters and histograms count in this process; the job and machine gauges
 * are read from the database at scrape time (one grouped query each), so every replica reports
 * the whole service's; the pool, readiness and edge gauges are this process's.
 */
export function createMetrics(deps: {
  database: Database;
  log: Logger;
  /** The compute driver's warm pool, where it keeps one (`ComputeDriver.poolStatus`). */
  poolStatus?: () => Promise<PoolCellStatus[]>;
  /** Where this process is in its life (`Readiness.state`). */
  readiness?: () => string;
  /** The edge's route cache in this process. */
  edgeRoutes?: () => EdgeRouteStats;
}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP requests by method, matched route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const signInFailures = new Counter({
    name: 'svc_sign_in_failures_total',
    help: 'Failed sign-ins: wrong e-mail or password, or refused by the rate limit',
    labelNames: ['reason'] as const,
    registers,
  });
  const tokenRefreshes = new Counter({
    name: 'svc_token_refreshes_total',
    help: 'OAuth token refreshes of app connections by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers,
  });
  const bundlePublishes = new Counter({
    name: 'svc_bundle_publishes_total',
    help: 'Bundle versions published (publish completed)',
    registers,
  });
  const moveDurations = new Histogram({
    name: 'svc_machine_move_duration_seconds',
    help: 'Machine moves that reached their end (create is provisioning), by kind, move and driver',
    labelNames: ['kind', 'move', 'driver'] as const,
    buckets: MOVE_BUCKETS,
    registers,
  });
  const moveFailures = new Counter({
    name: 'svc_machine_move_failures_total',
    help: 'Machine moves that ended in error, by kind, move, driver and status reason',
    labelNames: ['kind', 'move', 'driver', 'status_reason'] as const,
    registers,
  });
  const jobRuns = new Counter({
    name: 'svc_job_runs_total',
    help: 'Job attempts by queue and outcome (completed; retried: failed, tried again; failed: for good)',
    labelNames: ['queue', 'outcome'] as const,
    registers,
  });
  const jobDurations = new Histogram({
    name: 'svc_job_run_duration_seconds',
    help: 'How long job attempts ran, by queue',
    labelNames: ['queue'] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  const tokenRequests = new Counter({
    name: 'svc_app_token_requests_total',
    help: 'App connection token requests by provider and outcome (fresh, refreshed, 503, 410)',
    labelNames: ['provider', 'outcome'] as const,
    registers,
  });
  const providerRequests = new Histogram({
    name: 'svc_app_provider_request_duration_seconds',
    help: 'Calls to OAuth providers by provider and endpoint (token: refreshes and code exchanges)',
    labelNames: ['provider', 'endpoint'] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const mails = new Counter({
    name: 'svc_mail_deliveries_total',
    help: 'Mail delivery attempts by transport and outcome (a failed one is retried)',
    labelNames: ['transport', 'outcome'] as const,
    registers,
  });
  const webhookEvents = new Counter({
    name: 'svc_webhook_events_total',
    help: "Payment processor webhook deliveries by the service's event type and outcome",
    labelNames: ['type', 'outcome'] as const,
    registers,
  });
  const edgeRequests = new Counter({
    name: 'svc_edge_requests_total',
    help: "Requests for Agents' hosts the edge answered, by status code",
    labelNames: ['code'] as const,
    registers,
  });

  /**
   * One query per scrape however many gauges read it: a scrape collects every metric at once,
   * so the gauges that start together share the query in flight.
   */
  const shared = <T>(query: () => Promise<T>) => {
    let inFlight: Promise<T> | undefined;
    return () => {
      inFlight ??= query().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    };
  };
  const jobCounts = shared(() => countJobs(deps.database.db));
  const machineCounts = shared(() => countMachines(deps.database.db));
  /** Runs a gauge's fill; a failed query leaves the gauge empty and says so. */
  const collected = async (metric: string, fill: () => Promise<void>) => {
    try {
      await fill();
      return true;
    } catch (err) {
      deps.log.warn({ err, metric }, 'metric not collected');
      return false;
    }
  };

  new Gauge({
    name: 'svc_jobs',
    help: 'Background jobs by queue and state (pg-boss: created, retry, active, completed, cancelled, failed), at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      await collected('svc_jobs', async () => {
        for (const row of await jobCounts())
          this.set({ queue: row.label, state: row.state }, row.n);
      });
    },
  });
  new Gauge({
    name: 'svc_job_oldest_waiting_seconds',
    help: 'Age of the oldest runnable job no worker has claimed yet, by queue, at scrape time',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      this.reset();
      await collected('svc_job_oldest_waiting_seconds', async () => {
        const oldest = new Map<string, number>();
        for (const row of (await jobCounts()) as JobCount[]) {
          oldest.set(row.label, Math.max(oldest.get(row.label) ?? 0, row.oldestWaitingSeconds));
        }
        for (const [queue, seconds] of oldest) this.set({ queue }, seconds);
      });
    },
  });
  new Gauge({
    name: 'svc_machines',
    help: 'Agents and Plain VMs by kind, state and driver, at scrape time',
    labelNames: ['kind', 'state', 'driver'] as const,
    registers,
    async collect() {
      this.reset();
      await collected('svc_machines', async () => {
        for (const row of (await machineCounts()) as MachineCount[]) {
          this.set({ kind: row.label, state: row.state, driver: row.driver }, row.n);
        }
      });
    },
  });
  new Gauge({
    name: 'svc_database_up',
    help: "1 when this scrape's queries reached the database, 0 when they failed",
    registers,
    async collect() {
      this.set((await collected('svc_database_up', () => machineCounts().then(() => {}))) ? 1 : 0);
    },
  });

  const pool = () => deps.database.poolStatus();
  new Gauge({
    name: 'svc_db_pool_connections',
    help: "This process's database connections by state (in_use, idle); PGlite: its one session",
    labelNames: ['state'] as const,
    registers,
    collect() {
      const { open, inUse } = pool();
      this.set({ state: 'in_use' }, inUse);
      this.set({ state: 'idle' }, open - inUse);
    },
  });
  new Gauge({
    name: 'svc_db_pool_max_connections',
    help: "The most connections this process's pool opens",
    registers,
    collect() {
      this.set(pool().max);
    },
  });
  new Gauge({
    name: 'svc_db_pool_waiting',
    help: 'Callers waiting now for a database connection in this process',
    registers,
    collect() {
      this.set(pool().waiting);
    },
  });
  new Counter({
    name: 'svc_db_pool_waits_total',
    help: 'Callers that had to wait for a database connection in this process',
    registers,
    collect() {
      this.reset();
      this.inc(pool().waits);
    },
  });
  new Counter({
    name: 'svc_db_pool_wait_seconds_total',
    help: 'Time callers spent waiting for a database connection in this process',
    registers,
    collect() {
      this.reset();
      this.inc(pool().waitSeconds);
    },
  });

  const readiness = deps.readiness;
  if (readiness) {
    new Gauge({
      name: 'svc_readiness',
      help: "1 for this process's readiness state (loading, starting, ready, failed, stopping)",
      labelNames: ['state'] as const,
      registers,
      collect() {
        this.reset();
        const now = readiness();
        for (const state of new Set([...READINESS_STATES, now])) {
          this.set({ state }, state === now ? 1 : 0);
        }
      },
    });
  }

  const edgeRoutes = deps.edgeRoutes;
  if (edgeRoutes) {
    new Gauge({
      name: 'svc_edge_routes_cached',
      help: "Routes to Agents' gateways held in this process's edge cache",
      registers,
      collect() {
        this.set(edgeRoutes().cached);
      },
    });
    new Counter({
      name: 'svc_edge_route_lookups_total',
      help: 'Route resolutions by result: hit (from the cache) or miss (asked the database)',
      labelNames: ['result'] as const,
      registers,
      collect() {
        const { hits, misses } = edgeRoutes();
        this.reset();
        this.inc({ result: 'hit' }, hits);
        this.inc({ result: 'miss' }, misses);
      },
    });
  }

  const poolStatus = deps.poolStatus;
  if (poolStatus) {
    new Gauge({
      name: 'svc_warm_pool_machines',
      help: 'Warm-pool machines by cell and state (wanted, ready, starting), at scrape time',
      labelNames: ['cell', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        await collected('svc_warm_pool_machines', async () => {
          for (const { cell, want, ready, starting } of await poolStatus()) {
            this.set({ cell, state: 'wanted' }, want);
            this.set({ cell, state: 'ready' }, ready);
            this.set({ cell, state: 'starting' }, starting);
          }
        });
      },
    });
  }

  return {
    registry,
    observeRequest: ({ method, route, status }, seconds) =>
      requests.observe({ method, route, status: String(status) }, seconds),
    signInFailed: (reason) => signInFailures.inc({ reason }),
    tokenRefresh: (provider, outcome) => tokenRefreshes.inc({ provider, outcome }),
    bundlePublished: () => bundlePublishes.inc(),
    moveFinished: ({ kind, move, driver, failed, statusReason, seconds }) => {
      if (failed) {
        moveFailures.inc({ kind, move, driver, status_reason: statusReason ?? 'unknown' });
      } else if (seconds !== undefined) {
        moveDurations.observe({ kind, move, driver }, seconds);
      }
    },
    jobRun: (queue, outcome, seconds) => {
      jobRuns.inc({ queue, outcome });
      jobDurations.observe({ queue }, seconds);
    },
    tokenRequest: (provider, outcome) => tokenRequests.inc({ provider, outcome }),
    providerRequest: (provider, endpoint, seconds) =>
      providerRequests.observe({ provider, endpoint }, seconds),
    mail: (transport, outcome) => mails.inc({ transport, outcome }),
    webhookEvent: (type, outcome) => webhookEvents.inc({ type, outcome }),
    edgeRequest: (status) => edgeRequests.inc({ code: status === 0 ? 'none' : String(status) }),
  };
}
