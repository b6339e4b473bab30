import { fromKysely, type Job, type JobResult, PgBoss } from 'pg-boss';
import type { Database, Executor } from '../db/database.js';
import type { Logger } from '../logger.js';
import { DEFAULT_RETRY_LIMIT, type JobDefinition, type JobType } from './job.js';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export interface EnqueueOptions {
  /** Run no earlier than this many seconds from now. */
  readonly startAfterSeconds?: number;
  /** At most one queued job with this key (pg-boss `singletonKey`). */
  readonly singletonKey?: string;
}

export interface JobQueue {
  /**
   * Adds a job through `executor`: inside a transaction, the job exists only if the transaction
   * commits, so a state change and its follow-up work commit or roll back together. The payload
   * is checked against the job's schema now, and again when the job runs.
   */
  enqueue<P>(
    executor: Executor,
    job: JobType<P>,
    payload: NoInfer<P>,
    options?: EnqueueOptions,
  ): Promise<string | null>;
  /** Creates the queues and schedules; with `work`, also starts claiming and running jobs. */
  start(definitions: readonly JobDefinition<unknown>[], options: { work: boolean }): Promise<void>;
  /** Stops claiming; waits (up to `timeoutMs`) for running jobs to finish. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface JobQueueOptions {
  /** How often an idle worker looks for jobs (pg-boss minimum: 0.5 s). */
  readonly pollingIntervalSeconds?: number;
  /** Retry failed jobs at once instead of backing off (tests that exhaust retries). */
  readonly immediateRetries?: boolean;
  /**
   * A running job's worker says it is alive this often (half of it); a job whose worker fell
   * silent this long (a killed process) is failed and retried, instead of waiting out its
   * expiry. Also how often the queue looks for such jobs. pg-boss minimum: 10.
   */
  readonly heartbeatSeconds?: number;
}

const DEFAULT_HEARTBEAT_SECONDS = 30;

export function createJobQueue(
  database: Database,
  logger: Logger,
  options: JobQueueOptions = {},
): JobQueue {
  const connection = database.jobsConnection;
  const heartbeatSeconds = options.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS;
  const supervision = {
    superviseIntervalSeconds: heartbeatSeconds,
    monitorIntervalSeconds: heartbeatSeconds,
    // A job's insert NOTIFYs (on commit: enqueued in a transaction, it wakes no worker before it
    // exists), and the listening worker claims it at once; polling stays as the floor for a
    // lost notification or a listener that could not be set up.
    useListenNotify: true,
  };
  const boss =
    connection.kind === 'pglite'
      ? new PgBoss({ db: connection.db, backend: 'pglite', schema: 'pgboss', ...supervision })
      : new PgBoss({
          connectionString: connection.connectionString,
          schema: 'pgboss',
          max: 4,
          ...supervision,
        });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  const definitions = new Map<string, JobDefinition<unknown>>();
  let started = false;

  /** Runs one job; a thrown error fails this job only (retried per the queue's policy). */
  async function runJob(definition: JobDefinition<unknown>, job: Job<object>): Promise<JobResult> {
    const log = logger.child({ job: definition.name, jobId: job.id });
    try {
      await definition.run(definition.payload.parse(job.data), {
        id: job.id,
        signal: job.signal,
        isLastAttempt: job.retryCount >= (definition.retryLimit ?? DEFAULT_RETRY_LIMIT),
      });
      log.debug('job done');
      return { id: job.id, status: 'completed' };
    } catch (error) {
      log.error({ err: error, retryCount: job.retryCount }, 'job failed');
      return { id: job.id, status: 'failed', output: { message: String(error) } };
    }
  }

  /**
   * Claims jobs in batches and runs each batch's jobs side by side. While batches come back
   * full the worker fetches again at once (burst), so a backlog drains without waiting out the
   * polling interval between jobs.
   */
  function startWorker(definition: JobDefinition<unknown>) {
    return boss.work(
      definition.name,
      {
        pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
        // Only a job runnable at its insert notifies: a retry's or a deferred job's time comes
        // with no NOTIFY, so the poll stays as often as without one (pg-boss would relax it to
        // 30 s once notifications work).
        notifyPollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
        batchSize: definition.concurrency ?? 8,
        burstWhenBatchFull: true,
        perJobResults: true,
        // Two workers: one batch stuck on a slow provider call does not stop the queue.
        localConcurrency: 2,
      },
      (jobs: Job<object>[]) => Promise.all(jobs.map((job) => runJob(definition, job))),
    );
  }

  return {
    async enqueue(executor, job, payload, enqueueOptions = {}) {
      if (!definitions.has(job.name)) throw new Error(`Unknown job "${job.name}"`);
      const data = job.payload.parse(payload) as object;
      return boss.send(job.name, data, {
        db: fromKysely(executor),
        heartbeatSeconds,
        ...(enqueueOptions.startAfterSeconds !== undefined && {
          startAfter: enqueueOptions.startAfterSeconds,
        }),
        ...(enqueueOptions.singletonKey !== undefined && {
          singletonKey: enqueueOptions.singletonKey,
        }),
      });
    },

    async start(list, { work }) {
      for (const definition of list) definitions.set(definition.name, definition);
      await boss.start();
      started = true;
      for (const definition of list) {
        await boss.createQueue(definition.name, {
          retryLimit: definition.retryLimit ?? DEFAULT_RETRY_LIMIT,
          retryDelay: options.immediateRetries ? 0 : (definition.retryDelaySeconds ?? 5),
          retryBackoff: !options.immediateRetries,
          expireInSeconds: definition.expireInSeconds ?? 600,
          notify: true,
        });
        // createQueue leaves a queue an older version made as it was: waking is switched on here.
        await boss.updateQueue(definition.name, { notify: true });
        // pg-boss caches queue metadata at start and looks a newer queue up on first use through
        // its own connection; inside a caller's transaction that lookup would need a second
        // session (PGlite has one). A no-op delete loads the cache now.
        await boss.deleteJob(definition.name, NIL_UUID);
        if (definition.cron) await boss.schedule(definition.name, definition.cron, {});
        if (work) await startWorker(definition);
      }
    },

    async stop(timeoutMs = 10_000) {
      if (!started) return;
      started = false;
      await boss.stop({ graceful: true, timeout: timeoutMs, close: true });
    },
  };
}
