import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { composeService } from '../packages/server/src/composition-root.js';
import { loadConfig } from '../packages/server/src/config/config.js';
import { resolveSecrets } from '../packages/server/src/config/dev-keys.js';
import { STAND_IN_PROBES, TestComputeDriver } from '../packages/server/test/test-compute-driver.js';
import { measureReconcile, printReconcile, type ReconcileFigures } from './agents-reconcile.js';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 10_000);
/** The reconciler's pass is measured at these sizes, to show its statements do not follow them. */
const RECONCILE_SIZES = (process.env.BENCH_RECONCILE_SIZES ?? '1000,10000').split(',').map(Number);
const IN_FLIGHT = 25;
const TRANSITIONS_PER_AGENT = 6; // provisioning, running, stopping, stopped, destroying, removed

/**
 * Counts every statement sent to either database, whoever sends it (our queries and pg-boss's),
 * by wrapping the drivers' query methods in this process only.
 */
function countStatements(): () => number {
  let count = 0;
  const wrap = (proto: object, method: string) => {
    const target = proto as Record<string, (...args: unknown[]) => unknown>;
    const original = target[method] as (...args: unknown[]) => unknown;
    target[method] = function (this: unknown, ...args: unknown[]) {
      count += 1;
      return original.apply(this, args);
    };
  };
  wrap(pg.Client.prototype, 'query');
  wrap(PGlite.prototype, 'query');
  wrap(PGlite.prototype, 'exec');
  return () => count;
}

async function runOn(databaseUrl: string | undefined, statements: () => number) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-agents-'));
  const { config, secrets: raw } = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'error',
    DATA_DIR: dataDir,
    ...(databaseUrl && { DATABASE_URL: databaseUrl }),
    ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    HMAC_KEY: randomBytes(32).toString('base64'),
  });
  const compute = new TestComputeDriver('bench');
  const service = await composeService(config, await resolveSecrets(config, raw, () => {}), {
    work: true,
    parts: { compute, machineProbes: STAND_IN_PROBES, jobPollingIntervalSeconds: 0.5 },
  });
  await service.start();
  const { ctx } = service;
  try {
    const { user, account } = await ctx.accounts.createUser({
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: 'benchmark password',
      name: 'Bench',
    });
    const ids: string[] = [];
    const countIn = async (state: string) =>
      Number(
        (
          await ctx.database.db
            .selectFrom('agents')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            // By account, not by the list of ids: 10,000 parameters a poll would slow the run.
            .where('accountId', '=', account.id)
            .where('state', '=', state as never)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const settle = async (check: () => Promise<boolean>) => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 100));
    };
    const inBatches = async (items: number[] | string[], fn: (item: never) => Promise<unknown>) => {
      for (let i = 0; i < items.length; i += IN_FLIGHT) {
        await Promise.all(items.slice(i, i + IN_FLIGHT).map((item) => fn(item as never)));
      }
    };

    const startedAt = performance.now();
    const before = statements();
    const phases: [string, number][] = [];
    let phaseStart = performance.now();
    const phaseDone = (name: string) => {
      phases.push([name, performance.now() - phaseStart]);
      phaseStart = performance.now();
    };

    await inBatches(
      Array.from({ length: AGENTS }, (_, i) => i),
      async () => {
        const agent = await ctx.agents.create(user.id, {
          name: 'bench',
          size: 'small',
          region: 'eu',
          billingType: 'metered',
        });
        ids.push(agent.id);
      },
    );
    await settle(async () => (await countIn('running')) === AGENTS);
    phaseDone('create → running');
    await inBatches(ids, (id: string) => ctx.agents.act(user.id, id, 'stop'));
    await settle(async () => (await countIn('stopped')) === AGENTS);
    phaseDone('stop → stopped');
    await inBatches(ids, (id: string) => ctx.agents.act(user.id, id, 'destroy'));
    await settle(async () => (await countIn('destroying')) === 0 && compute.servers.size === 0);
    phaseDone('destroy → removed');

    const seconds = (performance.now() - startedAt) / 1000;
    const transitions = AGENTS * TRANSITIONS_PER_AGENT;
    const sent = statements() - before;
    console.log(
      `\n${config.database.kind}: ${AGENTS} Agents, ${transitions} transitions in ${seconds.toFixed(1)} s`,
    );
    for (const [name, ms] of phases) {
      console.log(
        `  ${name.padEnd(20)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${((AGENTS * 2) / (ms / 1000)).toFixed(0).padStart(5)} transitions/s`,
      );
    }
    console.log(
      `  overall              ${(transitions / seconds).toFixed(0).padStart(13)} transitions/s (target >= 200)`,
    );
    console.log(
      `  SQL statements       ${(sent / transitions).toFixed(1).padStart(13)} per transition (${sent} in all, pg-boss polling included)`,
    );
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * `BENCH_AGENTS` (10,000) Agents through create → running → stopped → destroyed on the test
 * driver, no latency; then one reconcile pass at each of `BENCH_RECONCILE_SIZES` (1,000 and
 * 10,000). On PGlite, and on PostgreSQL too when `DATABASE_URL` is set.
 */
export async function run(): Promise<void> {
  const statements = countStatements();
  const databases = [undefined, ...(process.env.DATABASE_URL ? [process.env.DATABASE_URL] : [])];
  for (const databaseUrl of databases) {
    await runOn(databaseUrl, statements);
    const runs: ReconcileFigures[][] = [];
    for (const size of RECONCILE_SIZES)
      runs.push(await measureReconcile(databaseUrl, size, statements));
    printReconcile(databaseUrl ? 'postgres' : 'pglite', runs);
  }
}
