import path from 'node:path';
import type { DestinationStream } from 'pino';
import { type AccountsService, createAccountsService } from './accounts/accounts.service.js';
import type { Argon2Cost } from './accounts/passwords.js';
import { type Clock, systemClock } from './adapters/clock.js';
import type { ComputeDriver } from './adapters/compute/compute-driver.js';
import { LocalComputeDriver } from './adapters/compute/local-compute-driver.js';
import { type AgentsService, createAgentsService } from './agents/agents.service.js';
import { type BillingService, createBillingService } from './billing/billing.service.js';
import type { Config } from './config/config.js';
import type { Secrets } from './config/secrets.js';
import { createDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { jobDefinitions } from './job-registry.js';
import type { JobDefinition } from './jobs/job.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { createLogger, type Loggers, subsystemLoggers } from './logger.js';
import { createVaultService, type VaultService } from './vault/vault.service.js';

/** Everything with state or I/O, built once and passed down. */
export interface AppContext {
  readonly config: Config;
  readonly secrets: Secrets;
  readonly log: Loggers;
  readonly clock: Clock;
  readonly database: Database;
  readonly jobs: JobQueue;
  readonly accounts: AccountsService;
  readonly compute: ComputeDriver;
  readonly agents: AgentsService;
  readonly billing: BillingService;
  readonly vault: VaultService;
  /** Job definitions beyond the registry's (tests add their own). */
  readonly extraJobs: readonly JobDefinition<unknown>[];
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
}

/** The composition root: opens the database and builds every service. Starts nothing. */
export async function createContext(
  config: Config,
  secrets: Secrets,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log = overrides.loggers ?? subsystemLoggers(createLogger(config, overrides.logDestination));
  const clock = overrides.clock ?? systemClock;
  const database =
    overrides.database ??
    (await createDatabase(config.database, (err) =>
      log.db.warn({ err }, 'idle database connection failed'),
    ));
  const jobs = createJobQueue(database, log.jobs, {
    ...(overrides.immediateJobRetries && { immediateRetries: true }),
    ...(overrides.jobPollingIntervalSeconds && {
      pollingIntervalSeconds: overrides.jobPollingIntervalSeconds,
    }),
  });
  const accounts = createAccountsService({
    database,
    clock,
    ...(overrides.passwordCost && { passwordCost: overrides.passwordCost }),
  });
  const compute =
    overrides.compute ??
    new LocalComputeDriver(
      path.join(config.dataDir, 'machines'),
      log.root.child({ subsystem: 'compute' }),
    );
  const agents = createAgentsService({
    database,
    clock,
    jobs,
    accounts,
    compute,
    publicUrl: config.http.publicUrl,
    provisionTimeoutMs: config.timing.provisionTimeoutMs,
    hmacKey: secrets.hmacKey,
  });
  return {
    config,
    secrets,
    log,
    clock,
    database,
    jobs,
    accounts,
    compute,
    agents,
    billing: createBillingService({ database, accounts }),
    vault: createVaultService({ database, clock, accounts }),
    extraJobs: overrides.extraJobs ?? [],
  };
}

/** Brings the database up to date and starts the job queue (running jobs only with `work`). */
export async function startContext(ctx: AppContext, options: { work: boolean }): Promise<void> {
  const applied = await migrateToLatest(ctx.database.db.withoutPlugins());
  if (applied.length > 0) ctx.log.db.info({ migrations: applied }, 'applied migrations');
  await ctx.jobs.start([...jobDefinitions(ctx), ...ctx.extraJobs], options);
  // Reconcile once at start (then on its schedule): a crash may have left servers behind.
  if (options.work) await ctx.jobs.enqueue(ctx.database.db, 'agents.reconcile', {});
  if (options.work && ctx.compute instanceof LocalComputeDriver) ctx.compute.start();
}

/** Stops the job queue (letting running jobs finish) and closes the database. */
export async function stopContext(ctx: AppContext): Promise<void> {
  try {
    await ctx.jobs.stop();
  } finally {
    await ctx.compute.close();
    await ctx.database.close();
  }
}
