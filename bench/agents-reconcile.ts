import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { sql } from 'kysely';
import pg from 'pg';
import { composeService } from '../packages/server/src/composition-root.js';
import { loadConfig } from '../packages/server/src/config/config.js';
import { resolveSecrets } from '../packages/server/src/config/dev-keys.js';
import type { AppContext } from '../packages/server/src/context.js';
import { migrateToLatest } from '../packages/server/src/db/migrate.js';
import { AGENT, PLAIN_VM } from '../packages/server/src/lifecycle/machine-kinds.js';
import { STAND_IN_PROBES, TestComputeDriver } from '../packages/server/test/test-compute-driver.js';

/** Of each kind, each pass: servers nobody owns, moves whose job died, and (VMs) firewalls drifted. */
const WORK = 10;
const SEED_BATCH = 2000;
const TARGET_SECONDS = 2;

export interface ReconcileFigures {
  readonly job: string;
  readonly machines: number;
  readonly seconds: number;
  readonly statements: number;
  readonly repaired: string;
}

/**
 * `machines` Agents and as many Plain VMs, in the database (inserted by SQL in batches) and at
 * the test driver, with `WORK` orphans, stuck moves and drifted firewalls of each kind; then one
 * pass of each reconcile job's function, timed, its statements counted. Only the pass runs: the
 * job queue is not started, so nothing else sends statements meanwhile.
 */
export async function measureReconcile(
  databaseUrl: string | undefined,
  machines: number,
  statements: () => number,
): Promise<ReconcileFigures[]> {
  const scratch = databaseUrl ? await scratchDatabase(databaseUrl) : undefined;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-reconcile-'));
  const { config, secrets: raw } = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'error',
    DATA_DIR: dataDir,
    ...(scratch && { DATABASE_URL: scratch.url }),
    ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    HMAC_KEY: randomBytes(32).toString('base64'),
  });
  const compute = new TestComputeDriver('bench');
  // Composed, never started: the pass is run by hand, with no queue polling beside it.
  const { ctx } = await composeService(config, await resolveSecrets(config, raw, () => {}), {
    work: false,
    parts: { compute, machineProbes: STAND_IN_PROBES },
  });
  try {
    await migrateToLatest(ctx.database.db.withoutPlugins());
    const seeded = await seed(ctx, compute, machines);
    const figures: ReconcileFigures[] = [];
    for (const { name: job } of [AGENT.jobs.reconcile, PLAIN_VM.jobs.reconcile]) {
      const definition = ctx.jobDefinitions.find((d) => d.name === job);
      if (!definition) throw new Error(`no job ${job}`);
      const before = statements();
      const startedAt = performance.now();
      await definition.run(
        {},
        { id: 'bench', signal: new AbortController().signal, isLastAttempt: true },
      );
      const seconds = (performance.now() - startedAt) / 1000;
      figures.push({
        job,
        machines,
        seconds,
        statements: statements() - before,
        repaired: await repaired(ctx, compute, seeded, job === AGENT.jobs.reconcile.name),
      });
    }
    return figures;
  } finally {
    await ctx.database.close();
    await rm(dataDir, { recursive: true, force: true });
    await scratch?.drop();
  }
}

interface Seeded {
  readonly orphans: string[];
  readonly stuck: string[];
  readonly serverless: string[];
  readonly drifted: string[];
}

async function seed(ctx: AppContext, compute: TestComputeDriver, machines: number) {
  const { account } = await ctx.accounts.createUser({
    email: `bench-${randomBytes(4).toString('hex')}@example.com`,
    password: 'benchmark password',
    name: 'Bench',
  });
  const longAgo = new Date(Date.now() - 2 * 60 * 60_000);
  const agents: string[] = Array.from({ length: machines }, () => randomUUID());
  const vms: string[] = Array.from({ length: machines }, () => randomUUID());
  const seeded: Seeded = {
    orphans: Array.from({ length: 2 * WORK }, () => randomUUID()),
    stuck: [...agents.slice(0, WORK), ...vms.slice(0, WORK)],
    serverless: agents.slice(WORK, 2 * WORK),
    drifted: vms.slice(WORK, 2 * WORK),
  };
  const stuck = new Set(seeded.stuck);
  const serverless = new Set(seeded.serverless);
  const stateOf = (id: string, i: number) =>
    stuck.has(id) ? (agents.includes(id) ? 'stopping' : 'starting') : i % 2 ? 'stopped' : 'running';
  const { db } = ctx.database;
  for (let i = 0; i < machines; i += SEED_BATCH) {
    await db
      .insertInto('agents')
      .values(
        agents.slice(i, i + SEED_BATCH).map((id, j) => ({
          id,
          accountId: account.id,
          name: 'bench',
          subdomain: `b${id.replaceAll('-', '')}`,
          size: 'small',
          region: 'eu',
          billingType: 'metered',
          state: serverless.has(id) ? 'error' : stateOf(id, i + j),
          statusReason: serverless.has(id) ? 'provisioning_timeout' : null,
          provider: 'bench',
          provisionDeadlineAt: null,
          slotId: null,
          cloningBy: null,
          cloneSourceId: null,
          updatedAt: stuck.has(id) ? longAgo : new Date(),
        })),
      )
      .execute();
    await db
      .insertInto('plainVms')
      .values(
        vms.slice(i, i + SEED_BATCH).map((id, j) => ({
          id,
          accountId: account.id,
          name: `vm-${i + j}`,
          size: 'small',
          region: 'eu',
          osImageKey: 'debian-12',
          billingType: 'metered',
          state: stateOf(id, i + j),
          statusReason: null,
          provider: 'bench',
          passwordEnabled: false,
          passwordHash: null,
          vaultEntryIds: '[]',
          authorizedKeys: '[]',
          firewallRules: JSON.stringify(DEFAULT_FIREWALL_RULES),
          ipv4: null,
          ipv6: null,
          sshHost: null,
          sshPort: null,
          slotId: null,
          provisionDeadlineAt: null,
          updatedAt: stuck.has(id) ? longAgo : new Date(),
        })),
      )
      .execute();
  }
  const server = (id: string, kind: 'agent' | 'plain_vm') => {
    const labels = { managedBy: 'svc', kind, [kind === 'agent' ? 'agentId' : 'plainVmId']: id };
    compute.servers.set(id, {
      status: 'running',
      labels,
      env: {},
      spec: {
        id,
        size: 'small',
        region: 'eu',
        bootstrapEnv: {},
        labels,
        ...(kind === 'plain_vm' && { login: { user: 'debian', authorizedKeys: [] } }),
      },
      firewall: structuredClone([...DEFAULT_FIREWALL_RULES]),
    });
  };
  for (const id of agents) server(id, 'agent');
  for (const id of vms) server(id, 'plain_vm');
  for (const [i, id] of seeded.orphans.entries()) server(id, i % 2 ? 'plain_vm' : 'agent');
  for (const id of seeded.drifted) {
    const vm = compute.servers.get(id);
    if (vm) vm.firewall = [];
  }
  return seeded;
}

/** What the pass repaired of what was seeded, checked (a pass that did nothing must not pass). */
async function repaired(
  ctx: AppContext,
  compute: TestComputeDriver,
  seeded: Seeded,
  isAgents: boolean,
): Promise<string> {
  const table = isAgents ? 'agents' : 'plainVms';
  const kind = isAgents ? 'agent' : 'plain_vm';
  const orphans = seeded.orphans.filter((id) => compute.servers.get(id)?.labels.kind === kind);
  const orphansLeft = orphans.filter((id) => compute.servers.has(id)).length;
  const { n: erred } = await ctx.database.db
    .selectFrom(table)
    .select(sql<number>`count(*)::int`.as('n'))
    .where('state', '=', 'error')
    .where('statusReason', 'like', '%_timeout')
    .where('statusReason', '!=', 'provisioning_timeout')
    .executeTakeFirstOrThrow();
  const serverlessLeft = isAgents
    ? seeded.serverless.filter((id) => compute.servers.has(id)).length
    : 0;
  const driftLeft = isAgents
    ? 0
    : seeded.drifted.filter((id) => compute.servers.get(id)?.firewall.length === 0).length;
  if (orphansLeft + serverlessLeft + driftLeft > 0 || erred !== WORK) {
    throw new Error(
      `the pass left work: ${orphansLeft} orphans, ${serverlessLeft} serverless, ${driftLeft} drifted, ${erred} of ${WORK} stuck failed`,
    );
  }
  return isAgents
    ? `${WORK} orphans and ${WORK} servers of timed-out provisioning removed, ${WORK} stuck moves failed`
    : `${WORK} orphans removed, ${WORK} stuck moves failed, ${WORK} firewalls re-applied`;
}

/** A fresh database beside `url`'s, dropped afterwards: the seeded machines stay out of the way. */
async function scratchDatabase(url: string) {
  const name = `svc_bench_reconcile_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  return {
    url: scratch.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Prints one size's figures and the statements' growth against the smaller size. */
export function printReconcile(kind: string, runs: ReconcileFigures[][]): void {
  console.log(`\n${kind}: one reconcile pass (each job over its own machines, test driver)`);
  for (const figures of runs) {
    for (const f of figures) {
      console.log(
        `  ${f.job.padEnd(20)} ${String(f.machines).padStart(6)} machines ${f.seconds.toFixed(2).padStart(6)} s (target < ${TARGET_SECONDS} s)  ${String(f.statements).padStart(4)} SQL statements  ${f.repaired}`,
      );
    }
  }
}
