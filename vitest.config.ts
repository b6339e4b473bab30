import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that mostly wait (a rate limit, processes starting and being killed) start first: left
 * to the end of a fresh run, one of them would run alone for minutes while the other worker idles.
 */
const WAITING_FILES =
  /(rate-limit|crash-recovery|database-outage|shutdown|route-changes).*\.test\.ts$/;

class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const waiting = (file: TestSpecification) => WAITING_FILES.test(file.moduleId);
    return [...sorted.filter(waiting), ...sorted.filter((file) => !waiting(file))];
  }
}

/** Tests against a real Incus daemon: `npm run test:incus` (CI runs them beside `npm test`). */
const INCUS_TESTS = 'packages/*/src/**/*.incus.test.ts';
/** The service as replicas behind HAProxy, on PostgreSQL: `npm run test:cluster`. */
const CLUSTER_TESTS = 'packages/*/src/**/*.cluster.test.ts';
/** Against the real Hetzner Cloud with the operator's HCLOUD_TOKEN: `npm run test:hetzner-live`. */
const HETZNER_LIVE_TESTS = 'packages/*/src/**/*.hetzner-live.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite instances are large; two workers fit the machines this runs on.
    maxWorkers: 2,
    sequence: { sequencer: WaitingFilesFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          exclude: [...configDefaults.exclude, INCUS_TESTS, HETZNER_LIVE_TESTS, CLUSTER_TESTS],
        },
      },
      { extends: true, test: { name: 'incus', include: [INCUS_TESTS] } },
      {
        extends: true,
        // One cluster at a time: two would share this machine's cores and time out each other.
        test: { name: 'cluster', include: [CLUSTER_TESTS], fileParallelism: false },
      },
      {
        extends: true,
        test: { name: 'hetzner-live', include: [HETZNER_LIVE_TESTS], testTimeout: 900_000 },
      },
    ],
  },
});
