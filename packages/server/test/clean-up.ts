import { createLogger } from '../src/logger.js';
import { runEach } from '../src/util/run-each.js';

const silent = createLogger({ logLevel: 'silent' });

/**
 * A test's clean-up: every step runs in order whatever became of the ones before (a failing one
 * must not leak what the next would remove), and the failures are thrown at the end, all of them,
 * so the run still reports them.
 */
export const cleanUp = (steps: Readonly<Record<string, () => unknown>>): Promise<void> =>
  runEach(
    silent,
    Object.fromEntries(Object.entries(steps).map(([name, step]) => [name, async () => step()])),
  );
