import { configDefaults, defineConfig } from 'vitest/config';

/** Tests against a real Incus daemon: `npm run test:incus` (CI runs them after `npm test`). */
const INCUS_TESTS = 'packages/*/src/**/*.incus.test.ts';
/** Against the real Hetzner Cloud with the operator's HCLOUD_TOKEN: `npm run test:hetzner-live`. */
const HETZNER_LIVE_TESTS = 'packages/*/src/**/*.hetzner-live.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite instances are large; two workers fit the machines this runs on.
    maxWorkers: 2,
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
          exclude: [...configDefaults.exclude, INCUS_TESTS, HETZNER_LIVE_TESTS],
        },
      },
      { extends: true, test: { name: 'incus', include: [INCUS_TESTS] } },
      {
        extends: true,
        test: { name: 'hetzner-live', include: [HETZNER_LIVE_TESTS], testTimeout: 900_000 },
      },
    ],
  },
});
