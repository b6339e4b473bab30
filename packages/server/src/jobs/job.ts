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
  /** Cron expression (UTC) for jobs that run on a schedule. */
  readonly cron?: string;
  run(payload: P, job: { readonly id: string; readonly signal: AbortSignal }): Promise<void>;
}

export function defineJob<P>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}
