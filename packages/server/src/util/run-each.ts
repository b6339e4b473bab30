import type { Logger } from '../logger.js';

/**
 * Runs every step of a repair pass in turn, each whatever became of the others (one failing
 * must not skip the rest), logs each failure under its name, and then fails if any failed: a
 * job so fails visibly and is retried, with every step done that could be.
 */
export async function runEach(
  log: Logger,
  steps: Readonly<Record<string, () => Promise<unknown>>>,
): Promise<void> {
  const failed: { step: string; error: unknown }[] = [];
  for (const [step, run] of Object.entries(steps)) {
    try {
      await run();
    } catch (error) {
      log.warn({ err: error, step }, `${step}: failed; the other steps ran`);
      failed.push({ step, error });
    }
  }
  if (failed.length === 1) throw failed[0]?.error;
  if (failed.length > 1) {
    throw new AggregateError(
      failed.map((each) => each.error),
      `failed: ${failed.map((each) => each.step).join(', ')}`,
    );
  }
}
