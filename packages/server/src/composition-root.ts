import type { Hono } from 'hono';
import { systemClock } from './adapters/clock.js';
import { createComputeDriver } from './adapters/compute/create-compute-driver.js';
import type { Config } from './config/config.js';
import type { Secrets } from './config/secrets.js';
import type { AppContext, ServiceParts } from './context.js';
import { agentHostMatcher } from './edge/edge-host.js';
import type { AppEnv } from './http/app-env.js';
import { listenAtOnce } from './http/listen-at-once.js';
import { Readiness } from './http/readiness.js';
import type { JobDefinition } from './jobs/job.js';
import type { ServerProbe } from './lifecycle/machine-readiness.js';
import { createLogger, subsystemLoggers } from './logger.js';

/** What a process runs, besides the services every process has. */
export interface ServiceOptions {
  /** Runs the jobs and the first reconciles (`--role` all or worker); otherwise jobs are only sent. */
  readonly work: boolean;
  /**
   * Listen for HTTP as soon as the compute driver is there (`--role` all, api, edge): the app
   * (only the operations routes, `/healthz`, `/readyz`, the OpenAPI document, for the edge role)
   * and the edge's hosts. `logged` is said with the `listening` line.
   */
  readonly http?: { readonly only?: 'operations'; readonly logged?: Record<string, unknown> };
  /** Serve the operator's commands on the admin socket once started (the process entry). */
  readonly adminSocket?: boolean;
  /** Count the process's own CPU, memory and event loop lag (the process entry only). */
  readonly processMetrics?: boolean;
  /**
   * `false`: the operator's command run in process (`admin-local.ts`) leaves the host's firewall
   * table for machines (Incus on the local socket) to the service, so it needs no root.
   */
  readonly hostGuard?: boolean;
  readonly parts?: ServiceParts;
}

/** A composed service: its parts, built; `start` runs its start-up work, `stop` takes it down. */
export interface Service {
  readonly ctx: AppContext;
  readonly app: Hono<AppEnv>;
  /** Migrations, the job queue, the first reconciles; then the edge's hosts and the admin socket. */
  start(): Promise<void>;
  /** Closes what listens, then the job queue (letting running jobs finish), driver, store, database. */
  stop(): Promise<void>;
}

/**
 * The composition root: the one place that builds the service, every part a named local in the
 * order they need each other. The compute driver comes first (one that cannot start ends the start
 * here, with nothing open and nothing listening), then the HTTP server listens at once, and only
 * then the rest is imported (`composition-modules.ts`) and built, while `/healthz` answers.
 */
export async function composeService(
  config: Config,
  secrets: Secrets,
  options: ServiceOptions,
): Promise<Service> {
  const parts = options.parts ?? {};
  const log = parts.loggers ?? subsystemLoggers(createLogger(config, parts.logDestination));
  const readiness = new Readiness();
  const compute =
    parts.compute ??
    (await createComputeDriver(
      config.compute,
      config.dataDir,
      log.root.child({ subsystem: 'compute' }),
      secrets,
      options.hostGuard === false ? { hostGuard: false } : {},
    ));
  const isAgentHost = agentHostMatcher(config.http.agentOrigin.domain, config.http.publicUrl);
  const front =
    options.http &&
    listenAtOnce({
      http: config.http,
      readiness,
      isEdgeHost: (host) => isAgentHost(host) !== undefined,
      log: log.root,
      logged: options.http.logged ?? {},
    });
  try {
    const m = await import('./composition-modules.js');
    const clock = parts.clock ?? systemClock;
    const database =
      parts.database ??
      (await m.createDatabase(config.database, (err) =>
        log.db.warn({ err }, 'idle database connection failed'),
      ));
    const jobs = m.createJobQueue(database, log.jobs, {
      heartbeatSeconds: config.timing.jobHeartbeatSeconds,
      ...(parts.immediateJobRetries && { immediateRetries: true }),
      ...(parts.jobPollingIntervalSeconds && {
        pollingIntervalSeconds: parts.jobPollingIntervalSeconds,
      }),
    });
    const publicUrl = config.http.publicUrl;
    const passwordCost = parts.passwordCost && { passwordCost: parts.passwordCost };
    const edgeRoutes = m.createEdgeRoutes({ database, compute, clock });
    const metrics = m.createMetrics({
      database,
      log: log.root.child({ subsystem: 'metrics' }),
      readiness: () => readiness.state,
      edgeRoutes: () => edgeRoutes.stats(),
      ...(compute.poolStatus && { poolStatus: async () => (await compute.poolStatus?.()) ?? [] }),
    });
    // It watches the event loop from registration on: the process entry's alone.
    if (options.processMetrics) m.collectDefaultMetrics({ register: metrics.registry });
    // Features get only this of accounts: they check who may act, they never manage accounts.
    const membership = m.createMembership();
    const sessions = m.createSessionsService({ database, clock, metrics, ...passwordCost });
    const apiTokens = m.createApiTokensService({ database, clock });
    const mail = m.createMailService({ jobs, config: config.mail });
    const transport = config.mail.transport.kind;
    const mailer = m.countedMailer(m.createMailer(config.mail, secrets, clock), transport, metrics);
    const notices = m.createNotices({ database, clock, jobs });
    const emailLinks = m.createEmailLinksService({
      database,
      clock,
      jobs,
      mail,
      sessions,
      publicUrl,
      ...passwordCost,
    });
    const invitations = m.createInvitationsService({
      database,
      clock,
      membership,
      mail,
      publicUrl,
    });
    const accounts = m.createAccountsService({
      database,
      clock,
      membership,
      sessions,
      emailLinks,
      mail,
      emailVerification: config.mail.emailVerification,
      ...passwordCost,
      accountDeleted: async (tx, accountId) => {
        await m.syncSubscriptionLater(tx, jobs, accountId);
      },
    });
    const routeChanges = m.createRouteChanges({
      database,
      routes: edgeRoutes,
      log: log.root.child({ subsystem: 'edge' }),
    });
    const gateways = m.createGatewayConnector(secrets.gatewayCa);
    const probes = parts.machineProbes ?? { agent: m.gatewayProbe(gateways), plainVm: m.sshProbe };
    const machineReadiness = (probe: ServerProbe) => ({
      probe,
      timeoutMs: config.timing.provisionTimeoutMs,
    });
    const tokenCipher = new m.TokenCipher(secrets.encryption);
    const store =
      parts.objectStore ??
      m.createObjectStore(config.objectStore, {
        publicUrl,
        hmacKey: secrets.hmacKey,
        clock,
        ...(secrets.s3Credentials && { s3Credentials: secrets.s3Credentials }),
      });
    const adoption = m.createAdoptionService({ database, store, cipher: tokenCipher });
    const agents = m.createAgentsService({
      adoption,
      database,
      clock,
      jobs,
      membership,
      compute,
      publicUrl,
      agentOrigin: config.http.agentOrigin,
      provisionTimeoutMs: config.timing.provisionTimeoutMs,
      hmacKey: secrets.hmacKey,
      forgetRoute: (subdomain) => routeChanges.announce(subdomain),
      idleStop: config.idleStop,
      notices,
    });
    const agentPorts = m.createAgentPortsService({
      database,
      clock,
      membership,
      listening: m.gatewayListening(compute, gateways),
      agentOrigin: config.http.agentOrigin,
      hmacKey: secrets.hmacKey,
    });
    const agentActivity = m.createAgentActivity({
      database,
      clock,
      log: log.root.child({ subsystem: 'edge' }),
      unitMs: config.idleStop.unitMs,
    });
    const plainVmsLog = log.root.child({ subsystem: 'plain-vms' });
    const plainVms = m.createPlainVmsService({
      database,
      clock,
      jobs,
      membership,
      compute,
      log: plainVmsLog,
      provisionTimeoutMs: config.timing.provisionTimeoutMs,
    });
    const snapshots = m.createMachineSnapshots({
      database,
      clock,
      jobs,
      membership,
      compute,
      perMachine: config.snapshotsPerMachine,
    });
    const providerFetch = parts.providerFetch;
    const providerClients = m.createProviderClients(
      config,
      secrets,
      providerFetch,
      metrics.providerRequest,
    );
    const appsLog = log.root.child({ subsystem: 'apps' });
    const appDeps = { database, clock, membership, cipher: tokenCipher, clients: providerClients };
    const refreshingTokens = m.createConnectionTokens({
      ...appDeps,
      log: appsLog,
      metrics,
      notices,
      refreshTimeoutMs: config.timing.refreshTimeoutMs,
    });
    const connectionTokens = m.countedTokens(refreshingTokens, metrics);
    const appConnections = m.createAppConnectionsService({
      ...appDeps,
      tokens: connectionTokens,
      log: appsLog,
    });
    const appAuthorization = m.createAuthorizationService({
      ...appDeps,
      redirectUri: `${publicUrl}/api/apps/callback`,
      log: appsLog,
    });
    const paymentProcessor = m.createPaymentProcessor(config.billing, secrets, {
      database,
      clock,
    });
    const billingLog = log.root.child({ subsystem: 'billing' });
    const billing = m.createBillingService({
      database,
      clock,
      membership,
      jobs,
      publicUrl,
      log: billingLog,
      notices,
      prices: config.billing.prices,
      billing: config.billing,
      processor: paymentProcessor,
    });
    const subscriptions = m.createSubscriptionService({
      database,
      clock,
      jobs,
      membership,
      log: billingLog,
      notices,
      processor: paymentProcessor,
      prices: config.billing.prices,
      graceDays: config.billing.graceDays,
    });
    const vault = m.createVaultService({ database, clock, membership });
    const audit = m.createAuditService({ database, membership });
    const publish = m.createPublishService({
      database,
      clock,
      store,
      publicUrl,
      metrics,
      limits: config.bundles,
    });
    const catalog = m.createCatalogService({
      database,
      clock,
      store,
      membership,
      publicUrl,
      log: log.root,
    });
    const search = m.createSearchService({ database, publicUrl });
    const definedJobs = [
      ...m.accountsJobs({ database, clock, emailLinks, invitations, log: log.accounts }),
      ...m.agentJobs({
        adoption,
        database,
        clock,
        compute,
        log: log.root.child({ subsystem: 'agents' }),
        notices,
        moveFinished: metrics.moveFinished,
        readiness: machineReadiness(probes.agent),
        bootstrapEnv: (agent) =>
          m.agentBootstrapEnv(
            {
              publicUrl,
              machineServiceUrl: compute.machineServiceUrl?.(publicUrl),
              agentScheme: config.http.agentOrigin.scheme,
            },
            secrets.hmacKey,
            agent,
          ),
        stopIdle: () => agents.stopIdle(),
      }),
      ...m.plainVmJobs({
        database,
        clock,
        compute,
        log: plainVmsLog,
        notices,
        moveFinished: metrics.moveFinished,
        readiness: machineReadiness(probes.plainVm),
      }),
      ...m.snapshotJobs({
        database,
        clock,
        compute,
        log: log.root.child({ subsystem: 'snapshots' }),
        restored: async (tx, { machineKind, machineId }) => {
          if (machineKind === 'agent') await jobs.enqueue(tx, m.pushToken, { agentId: machineId });
        },
      }),
      ...m.backupsJobs({
        database,
        clock,
        jobs,
        compute,
        notices,
        log: log.root.child({ subsystem: 'backups' }),
      }),
      ...m.bundlesJobs({ database, store, clock, log: log.root.child({ subsystem: 'bundles' }) }),
      ...m.mailJobs({ mailer, site: { publicUrl }, log: log.root.child({ subsystem: 'mail' }) }),
      ...m.noticesJobs({
        database,
        mail,
        publicUrl,
        log: log.root.child({ subsystem: 'notices' }),
      }),
      ...m.paymentJobs({
        database,
        clock,
        jobs,
        processor: paymentProcessor,
        log: billingLog,
        prices: config.billing.prices,
      }),
      ...m.invoicesJobs({ billing, processor: paymentProcessor }),
      ...(parts.extraJobs ?? []),
    ] as JobDefinition<unknown>[];
    // Each attempt of each job counted (`svc_job_runs_total`), its handler left as it is.
    const jobDefinitions = m.measuredJobs(definedJobs, metrics);
    const ctx: AppContext = {
      config,
      secrets,
      log,
      clock,
      readiness,
      database,
      jobs,
      metrics,
      sessions,
      accounts,
      emailLinks,
      invitations,
      apiTokens,
      compute,
      agents,
      agentPorts,
      edgeRoutes,
      routeChanges,
      gateways,
      agentActivity,
      plainVms,
      snapshots,
      billing,
      paymentProcessor,
      subscriptions,
      vault,
      audit,
      mail,
      notices,
      tokenCipher,
      appConnections,
      appAuthorization,
      bundles: { store, publish, catalog, search },
      jobDefinitions,
    };
    const app = m.createApp(ctx, options.http?.only ? { only: options.http.only } : {});
    const proxy =
      front &&
      m.createEdgeProxy({
        routes: edgeRoutes,
        gateways,
        agentOrigin: config.http.agentOrigin,
        publicUrl,
        trust: config.http,
        activity: agentActivity,
        ports: m.createEdgePorts({
          database,
          clock,
          hmacKey: secrets.hmacKey,
          publicUrl,
          agentOrigin: config.http.agentOrigin,
          log: log.root.child({ subsystem: 'edge' }),
        }),
        wake: (agentId, proof) => agents.wake(agentId, proof),
        log: log.root.child({ subsystem: 'edge' }),
      });
    const edge = proxy && m.countedEdge(proxy, metrics);
    let adminSocket: { close(): Promise<void> } | undefined;
    return {
      ctx,
      app,
      async start() {
        readiness.move('starting');
        // The app answers from now on, holding what must wait for the start (`readiness`).
        front?.serving.serveApp(app);
        try {
          await m.startContext(ctx, { work: options.work });
        } catch (error) {
          // A start cut short by a stop fails as the stop closed it: nothing more to report.
          if (readiness.state === 'starting') readiness.fail(error);
          throw error;
        }
        // Stopped while it started: it stays stopping, and serves nothing more.
        if (readiness.state !== 'starting') return;
        readiness.move('ready');
        // The edge's routes read the database as the migrations leave it: its hosts wait until now.
        if (front && edge) front.serving.serveFront(edge);
        // The operator CLI reaches this process through a socket in DATA_DIR while it holds the
        // database.
        if (options.adminSocket) adminSocket = await m.startAdminSocket(ctx);
      },
      async stop() {
        const failed = readiness.state === 'failed';
        readiness.move('stopping');
        if (failed) {
          // Requests waiting for a service that will not come are cut, so the process can end.
          await front?.cut();
          edge?.close();
          await m.stopContext(ctx, 0).catch(() => {});
          return;
        }
        // /readyz answers 503 from now on: a load balancer stops sending requests here while
        // this process still serves those that come meanwhile.
        const { drainMs, graceMs } = config.shutdown;
        if (front && drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
        await Promise.all([
          (async () => {
            const closing = front?.close(graceMs);
            // Proxied WebSockets (terminals, editors) end now: their browsers reconnect to
            // another process, and they would otherwise hold the close for the whole grace.
            edge?.close();
            await closing;
          })(),
          adminSocket?.close(),
        ]);
        await m.stopContext(ctx, graceMs);
      },
    };
  } catch (error) {
    // Built only in part (a module that failed to load, a database that did not open).
    readiness.fail(error);
    await front?.cut();
    await compute.close().catch(() => {});
    throw error;
  }
}
