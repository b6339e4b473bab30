import type { DestinationStream } from 'pino';
import type { AccountsService } from './accounts/accounts.service.js';
import type { ApiTokensService } from './accounts/api-tokens.service.js';
import type { EmailLinksService } from './accounts/email-links.service.js';
import type { InvitationsService } from './accounts/invitations.service.js';
import type { Argon2Cost } from './accounts/passwords.js';
import type { SessionsService } from './accounts/sessions.service.js';
import type { Clock } from './adapters/clock.js';
import type { ComputeDriver } from './adapters/compute/compute-driver.js';
import type { ObjectStore } from './adapters/object-store/object-store.js';
import type { AgentActivity } from './agents/agent-activity.js';
import type { AgentPortsService } from './agents/agent-ports.service.js';
import type { AgentsService } from './agents/agents.service.js';
import type { AppConnectionsService } from './app-connections/app-connections.service.js';
import type { AuthorizationService } from './app-connections/authorization.service.js';
import type { AuditService } from './audit/audit.service.js';
import type { BillingService } from './billing/billing.service.js';
import type { PaymentProcessor } from './billing/payment-processor.js';
import type { SubscriptionService } from './billing/subscription.service.js';
import type { CatalogService } from './bundles/catalog.service.js';
import type { PublishService } from './bundles/publish.service.js';
import type { SearchService } from './bundles/search.service.js';
import type { Config } from './config/config.js';
import type { Secrets } from './config/secrets.js';
import type { TokenCipher } from './crypto/token-cipher.js';
import type { Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { EdgeRoutes } from './edge/edge-routes.js';
import type { GatewayConnector } from './edge/gateway-connection.js';
import type { RouteChanges } from './edge/route-changes.js';
import type { Readiness } from './http/readiness.js';
import type { JobDefinition } from './jobs/job.js';
import type { JobQueue } from './jobs/queue.js';
import { AGENT, PLAIN_VM } from './lifecycle/machine-kinds.js';
import type { ServerProbe } from './lifecycle/machine-readiness.js';
import type { MachineSnapshots } from './lifecycle/machine-snapshots.js';
import type { Loggers } from './logger.js';
import type { MailService } from './mail/mail.service.js';
import type { Metrics } from './metrics/metrics.js';
import type { Notices } from './notices/notices.service.js';
import type { PlainVmsService } from './plain-vms/plain-vms.service.js';
import type { VaultService } from './vault/vault.service.js';

/** Everything with state or I/O, built once by the composition root (`composeService`) and passed down. */
export interface AppContext {
  readonly config: Config;
  readonly secrets: Secrets;
  readonly log: Loggers;
  readonly clock: Clock;
  /** Where the process is in its life: what `/readyz` says and what requests wait for. */
  readonly readiness: Readiness;
  readonly database: Database;
  readonly jobs: JobQueue;
  /** Prometheus metrics of this context (its own registry), served at `GET /metrics`. */
  readonly metrics: Metrics;
  readonly sessions: SessionsService;
  readonly accounts: AccountsService;
  /** E-mail verification and password reset links. */
  readonly emailLinks: EmailLinksService;
  readonly invitations: InvitationsService;
  /** Personal access tokens (`svcp_…`). */
  readonly apiTokens: ApiTokensService;
  readonly compute: ComputeDriver;
  readonly agents: AgentsService;
  /** Shared ports of Agents (`<port>--<subdomain>.<agent domain>`). */
  readonly agentPorts: AgentPortsService;
  /** The edge's routes (subdomain → gateway), which Agent moves in this process invalidate. */
  readonly edgeRoutes: EdgeRoutes;
  /** Tells every process's edge that an Agent's route changed (`LISTEN/NOTIFY`). */
  readonly routeChanges: RouteChanges;
  /** How the edge, and moves waiting for an Agent to answer, connect to gateways. */
  readonly gateways: GatewayConnector;
  /** What the edge reports of people using Agents (their idle stop reads it). */
  readonly agentActivity: AgentActivity;
  readonly billing: BillingService;
  /** Who collects the money (`BILLING_PROVIDER`). */
  readonly paymentProcessor: PaymentProcessor;
  /** The accounts' subscriptions: activation, deactivation, the processor's events. */
  readonly subscriptions: SubscriptionService;
  readonly vault: VaultService;
  readonly audit: AuditService;
  /** Outgoing mail: features enqueue messages in their transaction; a job sends them. */
  readonly mail: MailService;
  /** Mail to an account's owners and admins when something needs them; per-user choices. */
  readonly notices: Notices;
  readonly plainVms: PlainVmsService;
  /** Snapshots of Agents' and Plain VMs' disks (list, take, restore, delete). */
  readonly snapshots: MachineSnapshots;
  readonly tokenCipher: TokenCipher;
  readonly appConnections: AppConnectionsService;
  readonly appAuthorization: AuthorizationService;
  readonly bundles: {
    readonly store: ObjectStore;
    readonly publish: PublishService;
    readonly catalog: CatalogService;
    readonly search: SearchService;
  };
  /** Every job the service runs (and a test's own, from `overrides.extraJobs`). */
  readonly jobDefinitions: readonly JobDefinition<unknown>[];
}

/**
 * Parts handed to the composition root instead of the ones it would build (tests, tools, and the
 * process entry's own loggers), and the settings tests turn.
 */
export interface ServiceParts {
  readonly clock?: Clock;
  readonly logDestination?: DestinationStream;
  readonly loggers?: Loggers;
  readonly database?: Database;
  readonly passwordCost?: Argon2Cost;
  readonly jobPollingIntervalSeconds?: number;
  readonly immediateJobRetries?: boolean;
  readonly extraJobs?: readonly JobDefinition<unknown>[];
  readonly compute?: ComputeDriver;
  /**
   * How a move into `running` learns that the machine answers (tests on stand-in drivers, whose
   * machines answer nowhere, and whose made-up addresses must get no packet).
   */
  readonly machineProbes?: { readonly agent: ServerProbe; readonly plainVm: ServerProbe };
  /** How the service reaches OAuth providers (tests count or fault calls). */
  readonly providerFetch?: typeof fetch;
  readonly objectStore?: ObjectStore;
}

/** Brings the database up to date and starts the job queue (running jobs only with `work`). */
export async function startContext(ctx: AppContext, options: { work: boolean }): Promise<void> {
  const applied = await migrateToLatest(ctx.database.db.withoutPlugins());
  if (applied.length > 0) ctx.log.db.info({ migrations: applied }, 'applied migrations');
  await ctx.routeChanges.start();
  await ctx.jobs.start(ctx.jobDefinitions, options);
  // Reconcile once at start (then on its schedule): a crash may have left servers behind.
  if (options.work) {
    await ctx.jobs.enqueue(ctx.database.db, AGENT.jobs.reconcile, {});
    await ctx.jobs.enqueue(ctx.database.db, PLAIN_VM.jobs.reconcile, {});
  }
  if (options.work) ctx.compute.start?.();
}

/** Stops the job queue (letting running jobs finish within `graceMs`) and closes the database. */
export async function stopContext(ctx: AppContext, graceMs?: number): Promise<void> {
  try {
    await ctx.jobs.stop(graceMs);
  } finally {
    ctx.gateways.close();
    await ctx.compute.close();
    await ctx.bundles.store.close();
    await ctx.database.close();
  }
}
