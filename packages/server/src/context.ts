import type { DestinationStream } from 'pino';
import { accountsJobs } from './accounts/accounts.jobs.js';
import { type AccountsService, createAccountsService } from './accounts/accounts.service.js';
import { type ApiTokensService, createApiTokensService } from './accounts/api-tokens.service.js';
import { createEmailLinksService, type EmailLinksService } from './accounts/email-links.service.js';
import {
  createInvitationsService,
  type InvitationsService,
} from './accounts/invitations.service.js';
import { createMembership } from './accounts/membership.js';
import type { Argon2Cost } from './accounts/passwords.js';
import { createSessionsService, type SessionsService } from './accounts/sessions.service.js';
import { type Clock, systemClock } from './adapters/clock.js';
import type { ComputeDriver } from './adapters/compute/compute-driver.js';
import { createComputeDriver } from './adapters/compute/create-compute-driver.js';
import { createObjectStore } from './adapters/object-store/create-object-store.js';
import type { ObjectStore } from './adapters/object-store/object-store.js';
import { agentJobs } from './agents/agents.jobs.js';
import { type AgentsService, createAgentsService } from './agents/agents.service.js';
import { agentBootstrapEnv } from './agents/bootstrap-env.js';
import {
  type AppConnectionsService,
  createAppConnectionsService,
} from './app-connections/app-connections.service.js';
import {
  type AuthorizationService,
  createAuthorizationService,
} from './app-connections/authorization.service.js';
import { createConnectionTokens } from './app-connections/connection-tokens.js';
import { createProviderClients } from './app-connections/oauth-client.js';
import { type AuditService, createAuditService } from './audit/audit.service.js';
import { type BillingService, createBillingService } from './billing/billing.service.js';
import { createPaymentProcessor } from './billing/create-payment-processor.js';
import { invoicesJobs } from './billing/invoices.jobs.js';
import { paymentJobs, syncSubscriptionLater } from './billing/payment.jobs.js';
import type { PaymentProcessor } from './billing/payment-processor.js';
import {
  createSubscriptionService,
  type SubscriptionService,
} from './billing/subscription.service.js';
import { createAdoptionService } from './bundles/adoption.service.js';
import { bundlesJobs } from './bundles/bundles.jobs.js';
import { type CatalogService, createCatalogService } from './bundles/catalog.service.js';
import { createPublishService, type PublishService } from './bundles/publish.service.js';
import { createSearchService, type SearchService } from './bundles/search.service.js';
import type { Config } from './config/config.js';
import type { Secrets } from './config/secrets.js';
import { TokenCipher } from './crypto/token-cipher.js';
import { createDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createEdgeRoutes, type EdgeRoutes } from './edge/edge-routes.js';
import {
  createGatewayConnector,
  type GatewayConnector,
  gatewayProbe,
} from './edge/gateway-connection.js';
import type { JobDefinition } from './jobs/job.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { AGENT, PLAIN_VM } from './lifecycle/machine-kinds.js';
import type { ServerProbe } from './lifecycle/machine-readiness.js';
import { createLogger, type Loggers, subsystemLoggers } from './logger.js';
import { mailJobs } from './mail/mail.jobs.js';
import { createMailService, type MailService } from './mail/mail.service.js';
import { createMailer } from './mail/mailer.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { plainVmJobs } from './plain-vms/plain-vms.jobs.js';
import { createPlainVmsService, type PlainVmsService } from './plain-vms/plain-vms.service.js';
import { sshProbe } from './plain-vms/ssh-answers.js';
import { createVaultService, type VaultService } from './vault/vault.service.js';

/** Everything with state or I/O, built once and passed down. */
export interface AppContext {
  readonly config: Config;
  readonly secrets: Secrets;
  readonly log: Loggers;
  readonly clock: Clock;
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
  /** The edge's routes (subdomain → gateway), which Agent moves in this process invalidate. */
  readonly edgeRoutes: EdgeRoutes;
  /** How the edge, and moves waiting for an Agent to answer, connect to gateways. */
  readonly gateways: GatewayConnector;
  readonly billing: BillingService;
  /** Who collects the money (`BILLING_PROVIDER`). */
  readonly paymentProcessor: PaymentProcessor;
  /** The accounts' subscriptions: activation, deactivation, the processor's events. */
  readonly subscriptions: SubscriptionService;
  readonly vault: VaultService;
  readonly audit: AuditService;
  /** Outgoing mail: features enqueue messages in their transaction; a job sends them. */
  readonly mail: MailService;
  readonly plainVms: PlainVmsService;
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

/** Replaceable parts, for tests and tools. */
export interface ContextOverrides {
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

/** The composition root: opens the database and builds every service. Starts nothing. */
export async function createContext(
  config: Config,
  secrets: Secrets,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log = overrides.loggers ?? subsystemLoggers(createLogger(config, overrides.logDestination));
  const clock = overrides.clock ?? systemClock;
  // Before the database: a driver that cannot start (Incus unreachable) leaves nothing open.
  const compute =
    overrides.compute ??
    (await createComputeDriver(
      config.compute,
      config.dataDir,
      log.root.child({ subsystem: 'compute' }),
      secrets,
    ));
  const database =
    overrides.database ??
    (await createDatabase(config.database, (err) =>
      log.db.warn({ err }, 'idle database connection failed'),
    ));
  const jobs = createJobQueue(database, log.jobs, {
    heartbeatSeconds: config.timing.jobHeartbeatSeconds,
    ...(overrides.immediateJobRetries && { immediateRetries: true }),
    ...(overrides.jobPollingIntervalSeconds && {
      pollingIntervalSeconds: overrides.jobPollingIntervalSeconds,
    }),
  });
  const passwordCost = overrides.passwordCost && { passwordCost: overrides.passwordCost };
  const metrics = createMetrics({ database, log: log.root.child({ subsystem: 'metrics' }) });
  // Features get only this of accounts: they check who may act, they never manage accounts.
  const membership = createMembership();
  const sessions = createSessionsService({ database, clock, metrics, ...passwordCost });
  const mail = createMailService({ jobs, config: config.mail });
  const emailLinks = createEmailLinksService({
    database,
    clock,
    jobs,
    mail,
    sessions,
    publicUrl: config.http.publicUrl,
    ...passwordCost,
  });
  const invitations = createInvitationsService({
    database,
    clock,
    membership,
    mail,
    publicUrl: config.http.publicUrl,
  });
  const accounts = createAccountsService({
    database,
    clock,
    membership,
    sessions,
    emailLinks,
    mail,
    emailVerification: config.mail.emailVerification,
    ...passwordCost,
    accountDeleted: async (tx, accountId) => {
      await syncSubscriptionLater(tx, jobs, accountId);
    },
  });
  const edgeRoutes = createEdgeRoutes({ database, compute, clock });
  const gateways = createGatewayConnector(secrets.gatewayCa);
  const probes = overrides.machineProbes ?? { agent: gatewayProbe(gateways), plainVm: sshProbe };
  const readiness = (probe: ServerProbe) => ({
    probe,
    timeoutMs: config.timing.provisionTimeoutMs,
  });
  const tokenCipher = new TokenCipher(secrets.encryption);
  const store =
    overrides.objectStore ??
    createObjectStore(config.objectStore, {
      publicUrl: config.http.publicUrl,
      hmacKey: secrets.hmacKey,
      clock,
      ...(secrets.s3Credentials && { s3Credentials: secrets.s3Credentials }),
    });
  const adoption = createAdoptionService({ database, store, cipher: tokenCipher });
  const agents = createAgentsService({
    adoption,
    database,
    clock,
    jobs,
    membership,
    compute,
    publicUrl: config.http.publicUrl,
    agentOrigin: config.http.agentOrigin,
    provisionTimeoutMs: config.timing.provisionTimeoutMs,
    hmacKey: secrets.hmacKey,
    forgetRoute: (subdomain) => edgeRoutes.forget(subdomain),
  });
  const providerClients = createProviderClients(config, secrets, overrides.providerFetch);
  const appsLog = log.root.child({ subsystem: 'apps' });
  const appDeps = { database, clock, membership, cipher: tokenCipher, clients: providerClients };
  const tokens = createConnectionTokens({
    ...appDeps,
    log: appsLog,
    metrics,
    refreshTimeoutMs: config.timing.refreshTimeoutMs,
  });
  const publicUrl = config.http.publicUrl;
  const paymentProcessor = createPaymentProcessor(config.billing, secrets, { database, clock });
  const billingLog = log.root.child({ subsystem: 'billing' });
  const billing = createBillingService({
    database,
    clock,
    membership,
    prices: config.billing.prices,
    jobs,
    billing: config.billing,
    processor: paymentProcessor,
    publicUrl,
    log: log.root.child({ subsystem: 'billing' }),
  });
  const jobDefinitions = [
    ...accountsJobs({ database, clock, emailLinks, invitations, log: log.accounts }),
    ...agentJobs({
      adoption,
      database,
      clock,
      compute,
      log: log.root.child({ subsystem: 'agents' }),
      readiness: readiness(probes.agent),
      bootstrapEnv: (agent) =>
        agentBootstrapEnv(
          {
            publicUrl,
            machineServiceUrl: compute.machineServiceUrl?.(publicUrl),
            agentScheme: config.http.agentOrigin.scheme,
          },
          secrets.hmacKey,
          agent,
        ),
    }),
    ...plainVmJobs({
      database,
      clock,
      compute,
      log: log.root.child({ subsystem: 'plain-vms' }),
      readiness: readiness(probes.plainVm),
    }),
    ...bundlesJobs({ database, store, clock, log: log.root.child({ subsystem: 'bundles' }) }),
    ...mailJobs({
      mailer: createMailer(config.mail, secrets, clock),
      site: { publicUrl },
      log: log.root.child({ subsystem: 'mail' }),
    }),
    ...paymentJobs({
      database,
      clock,
      jobs,
      processor: paymentProcessor,
      prices: config.billing.prices,
      log: billingLog,
    }),
    ...invoicesJobs({ billing, processor: paymentProcessor }),
    ...(overrides.extraJobs ?? []),
  ] as JobDefinition<unknown>[];
  return {
    config,
    secrets,
    log,
    clock,
    database,
    jobs,
    metrics,
    sessions,
    accounts,
    emailLinks,
    invitations,
    apiTokens: createApiTokensService({ database, clock }),
    compute,
    agents,
    edgeRoutes,
    gateways,
    billing,
    paymentProcessor,
    subscriptions: createSubscriptionService({
      database,
      clock,
      jobs,
      membership,
      processor: paymentProcessor,
      prices: config.billing.prices,
      graceDays: config.billing.graceDays,
      log: billingLog,
    }),
    vault: createVaultService({ database, clock, membership }),
    audit: createAuditService({ database, membership }),
    mail,
    tokenCipher,
    appConnections: createAppConnectionsService({ ...appDeps, tokens, log: appsLog }),
    appAuthorization: createAuthorizationService({
      ...appDeps,
      redirectUri: `${config.http.publicUrl}/api/apps/callback`,
      log: appsLog,
    }),
    plainVms: createPlainVmsService({
      database,
      clock,
      jobs,
      membership,
      compute,
      log: log.root.child({ subsystem: 'plain-vms' }),
      provisionTimeoutMs: config.timing.provisionTimeoutMs,
    }),
    bundles: {
      store,
      publish: createPublishService({
        database,
        clock,
        store,
        publicUrl,
        limits: config.bundles,
        metrics,
      }),
      catalog: createCatalogService({
        database,
        clock,
        store,
        membership,
        publicUrl,
        log: log.root,
      }),
      search: createSearchService({ database, publicUrl }),
    },
    jobDefinitions,
  };
}

/** Brings the database up to date and starts the job queue (running jobs only with `work`). */
export async function startContext(ctx: AppContext, options: { work: boolean }): Promise<void> {
  const applied = await migrateToLatest(ctx.database.db.withoutPlugins());
  if (applied.length > 0) ctx.log.db.info({ migrations: applied }, 'applied migrations');
  await ctx.jobs.start(ctx.jobDefinitions, options);
  // Reconcile once at start (then on its schedule): a crash may have left servers behind.
  if (options.work) {
    await ctx.jobs.enqueue(ctx.database.db, AGENT.jobs.reconcile, {});
    await ctx.jobs.enqueue(ctx.database.db, PLAIN_VM.jobs.reconcile, {});
  }
  if (options.work) ctx.compute.start?.();
}

/** Stops the job queue (letting running jobs finish) and closes the database. */
export async function stopContext(ctx: AppContext): Promise<void> {
  try {
    await ctx.jobs.stop();
  } finally {
    ctx.gateways.close();
    await ctx.compute.close();
    await ctx.bundles.store.close();
    await ctx.database.close();
  }
}
