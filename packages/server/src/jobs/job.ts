import type { z } from 'zod';

/**
 * One kind of background work, declared once: its name, the schema of its payload and how it is
 * retried. Producers enqueue through the declaration (`jobs.enqueue(tx, job, payload)`, a wrong
 * payload is a type error) and the feature's handler is attached to it with `handleJob`; the
 * queue creates one pg-boss queue per declaration with its retry policy.
 */
export interface JobType<P = unknown> {
  /** Queue name, `feature.verb` (letters, digits, `.`, `-`): written here and nowhere else. */
  readonly name: string;
  readonly payload: z.ZodType<P>;
  readonly retryLimit?: number;
  readonly retryDelaySeconds?: number;
  /** How long one run may take before pg-boss treats it as failed and retries it. */
  readonly expireInSeconds?: number;
  /** Jobs of this kind one process claims and runs at once (default 8), side by side. */
  readonly concurrency?: number;
  /** Cron expression (UTC) for jobs that run on a schedule. */
  readonly cron?: string;
}

/**
 * A declared job with its handler. Handlers must be idempotent: a job can run again after a crash
 * or a timeout, so each step checks what has already been done.
 */
export interface JobDefinition<P = unknown> extends JobType<P> {
  /** Receives the payload parsed by the declaration's schema when the job runs. */
  run(payload: P, job: JobRun): Promise<void>;
}

export interface JobRun {
  readonly id: string;
  readonly signal: AbortSignal;
  /** No retry follows if this attempt fails: the handler records the failure for good. */
  readonly isLastAttempt: boolean;
}

export const DEFAULT_RETRY_LIMIT = 3;

export function defineJob<P>(type: JobType<P>): JobType<P> {
  return type;
}

/**
 * The handler of `type`. `settings` are known only where the handler is built (a wait that
 * depends on configuration); they override the declaration's for this process.
 */
export function handleJob<P>(
  type: JobType<P>,
  run: JobDefinition<P>['run'],
  settings: Pick<JobType<P>, 'expireInSeconds'> = {},
): JobDefinition<unknown> {
  return { ...type, ...settings, run } as JobDefinition<unknown>;
}
