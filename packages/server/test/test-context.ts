import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signUp } from '@svc/contract';
import { LocalComputeDriver } from '../src/adapters/compute/local-compute-driver.js';
import { composeService, type Service } from '../src/composition-root.js';
import { loadConfig } from '../src/config/config.js';
import { resolveSecrets } from '../src/config/dev-keys.js';
import type { AppContext, ServiceParts } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { LogCapture } from './log-capture.js';
import { TestClient } from './test-client.js';
import { TestClock } from './test-clock.js';
import { STAND_IN_PROBES, TestComputeDriver } from './test-compute-driver.js';
import { createTestDatabase, type DatabaseKind } from './test-db.js';

/** Fixed test keys (never used outside tests). */
export const TEST_ENV = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'debug',
  ENCRYPTION_KEYS: `test1:${Buffer.alloc(32, 1).toString('base64')}`,
  HMAC_KEY: Buffer.alloc(32, 2).toString('base64'),
  // Tests that move the clock by hours would see their Agents idle-stopped by the scheduled
  // sweep; the idle stop's own tests choose a time.
  AGENT_IDLE_STOP_MINUTES: '0',
} as const;

/** Cheap argon2id parameters so tests don't spend their time hashing. */
export const FAST_PASSWORDS = { memoryKiB: 1024, passes: 1, parallelism: 1 } as const;

export interface TestContext {
  readonly ctx: AppContext;
  readonly app: Service['app'];
  readonly client: TestClient;
  readonly clock: TestClock;
  readonly logs: LogCapture;
  /** The compute driver, unless the test passed its own. */
  readonly compute: TestComputeDriver;
  /** A new browser-like client (own cookies, own address unless given) on the same app. */
  newClient(address?: string): TestClient;
  close(): Promise<void>;
}

/**
 * The real app on a fresh database of its own, with a test clock, captured logs and fast
 * password hashing; jobs run (polling every half second).
 */
export async function createTestContext(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; overrides?: ServiceParts } = {},
): Promise<TestContext> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-test-'));
  const { config, secrets: raw } = loadConfig({ ...TEST_ENV, DATA_DIR: dataDir, ...options.env });
  const secrets = await resolveSecrets(config, raw, () => {});
  const logs = new LogCapture();
  const clock = new TestClock();
  const { database, drop } = await createTestDatabase(kind);
  const compute = new TestComputeDriver();
  const service = await composeService(config, secrets, {
    work: true,
    parts: {
      database,
      clock,
      logDestination: logs,
      passwordCost: FAST_PASSWORDS,
      jobPollingIntervalSeconds: 0.5,
      compute,
      // The test driver's machines answer at once; a test that brings its own driver probes it.
      ...(!(options.overrides && 'compute' in options.overrides) && {
        machineProbes: STAND_IN_PROBES,
      }),
      ...options.overrides,
    },
  });
  await service.start();
  const { ctx, app } = service;
  const newClient = (address?: string) =>
    new TestClient(app, new URL(config.http.publicUrl).origin, address);
  return {
    ctx,
    app,
    client: newClient(),
    clock,
    logs,
    compute,
    newClient,
    // Tolerates a context a test already took apart (e.g. closed its database on purpose).
    close: async () => {
      await service.stop().catch(() => {});
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let counter = 0;

/** Signs a new user up on `client` (which then holds the session); returns the sign-up body. */
export async function signUpUser(
  client: TestClient,
  fields: { email?: string; name?: string } = {},
) {
  counter += 1;
  const email = fields.email ?? `user${counter}-${Date.now()}@example.com`;
  const res = await client.call(signUp, {
    body: { email, password: 'correct horse battery', name: fields.name ?? `User ${counter}` },
  });
  return res.body;
}

/**
 * A test context on the real local compute driver (machines are processes on this host, under a
 * temporary directory). `close` also removes every machine it made, even after a failed test.
 */
export async function createLocalTestContext(
  options: { env?: Record<string, string>; overrides?: ServiceParts } = {},
): Promise<TestContext & { readonly driver: LocalComputeDriver }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-local-'));
  const driver = new LocalComputeDriver(
    path.join(dir, 'machines'),
    createLogger({ logLevel: 'silent' }),
  );
  const t = await createTestContext('pglite', {
    ...options,
    overrides: { ...options.overrides, compute: driver },
  });
  return {
    ...t,
    driver,
    close: async () => {
      for (const server of await driver.listServers({})) await driver.deleteServer(server.id);
      await t.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
