import type { z } from 'zod';

/**
 * One kind of background work. Handlers must be idempotent: a job can run again after a crash or
 * a timeout, so each step checks what has already been done.
 */
export interface JobDefinition<P = unknown> {
  /** Queue name, `feature.verb` (letters, digits, `.`, `-`). */
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
  run(payload: P, job: JobRun): Promise<void>;
}

export interface JobRun {
  readonly id: string;
  readonly signal: AbortSignal;
  /** No retry follows if this attempt fails: the handler records the failure for good. */
  readonly isLastAttempt: boolean;
}

export const DEFAULT_RETRY_LIMIT = 3;

export function defineJob<P>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}
