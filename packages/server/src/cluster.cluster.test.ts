import { setTimeout as sleep } from 'node:timers/promises';
import { createAgent, DEFAULT_FIREWALL_RULES, putPlainVmFirewall } from '@svc/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type ClusterProcess, startCluster } from '../test/cluster.js';
import { appsStandIn, ClusterMix } from '../test/cluster-mix.js';
import type { StandIn } from '../test/stand-in-provider.js';
import { testDatabaseUrl } from '../test/test-db.js';
import { waitFor } from '../test/wait.js';

// `npm run test:cluster` (CI runs it after the other tests): the service as replicas behind
// HAProxy, every process restarted in turn with SIGTERM while clients keep using it.

if (!process.env.TEST_DATABASE_URL) {
  throw new Error('TEST_DATABASE_URL is unset: the cluster runs on PostgreSQL only');
}

describe('a rolling restart behind HAProxy', () => {
  let cluster: Cluster;
  let standIn: StandIn | undefined;
  const failures: string[] = [];
  let mix: ClusterMix;
  const began = Date.now();
  const phase = (name: string) =>
    console.log(`${name}: ${((Date.now() - began) / 1000).toFixed(1)} s`);

  beforeAll(async () => {
    cluster = await startCluster(testDatabaseUrl('postgres'), {
      env: async (url) => {
        standIn = await appsStandIn(url);
        return standIn.env();
      },
    });
    phase('cluster started');
    mix = new ClusterMix(cluster, failures);
    await mix.setUp();
    phase('mix set up');
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    await standIn?.close();
  });

  it('answers every request and completes every operation while each process restarts in turn', async () => {
    let restarting = true;
    const restarts = (async () => {
      try {
        for (const process of cluster.processes) {
          const code = await process.stop('SIGTERM');
          expect(code, `${process.name} exit code`).toBe(0);
          await process.start();
        }
      } finally {
        restarting = false;
      }
    })();
    const loop = async (body: () => Promise<unknown>) => {
      while (restarting) await body();
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await Promise.all([
      restarts,
      loop(() => mix.agentLife()),
      loop(() => mix.agentLife()),
      loop(() => mix.listAndFirewall()),
      loop(async () => {
        await mix.tokenRead();
        await pause(200);
      }),
      loop(async () => {
        await mix.publish();
        await pause(500);
      }),
      // A sign-in of a new browser now and then (sign-in is rate-limited per address).
      loop(async () => {
        await mix.signIn();
        await pause(2_000);
      }),
    ]);
    phase('rolling restart done');
    // No job ran twice: each finished in its worker's grace, none was taken up again.
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    const retried = await db.query(
      'select name, retry_count from pgboss.job where retry_count > 0 order by name',
    );
    const jobs = await db.query('select count(*)::int as n from pgboss.job');
    await db.end();
    expect(retried.rows).toEqual([]);
    expect(jobs.rows[0].n).toBeGreaterThan(100);
    const { counts } = mix;
    console.log(`during the rolling restart: ${JSON.stringify(counts)}`);
    expect(failures).toEqual([]);
    expect(counts['agent create']).toBeGreaterThan(2);
    expect(counts['firewall put']).toBeGreaterThan(10);
    expect(counts['app-token read']).toBeGreaterThan(10);
    expect(counts['bundle publish']).toBeGreaterThan(2);
    expect(counts['sign-in']).toBeGreaterThan(0);
    expect(cluster.logs.filter((line) => !line.startsWith('haproxy'))).toEqual([]);
  }, 900_000);

  it('recovers from an api process killed mid-request and a worker killed mid-provisioning', async () => {
    const byName = (name: string) => {
      const found = cluster.processes.find((p) => p.name === name);
      if (!found) throw new Error(`no ${name}`);
      return found;
    };
    const [api1, worker1, worker2] = ['api1', 'worker1', 'worker2'].map(byName) as [
      ClusterProcess,
      ClusterProcess,
      ClusterProcess,
    ];
    const rules = DEFAULT_FIREWALL_RULES.slice(0, 1);

    // Six firewall PUTs whose bodies arrive slowly: HAProxy's round robin hands at least one to
    // api1, which dies while it waits for the rest.
    const body = JSON.stringify({ rules });
    const headers = {
      'content-type': 'application/json',
      origin: cluster.url,
      cookie: [...mix.client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    };
    const slowPut = () => {
      const bytes = new TextEncoder().encode(body);
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue(bytes.slice(0, 10));
          await sleep(2_000);
          controller.enqueue(bytes.slice(10));
          controller.close();
        },
      });
      return fetch(`${cluster.url}/api/plain-vms/${mix.vmId}/firewall`, {
        method: 'PUT',
        headers,
        body: stream,
        duplex: 'half',
      } as RequestInit).then(
        async (res) => {
          await res.arrayBuffer();
          return res.status;
        },
        () => 'broken',
      );
    };
    const inFlight = Array.from({ length: 6 }, slowPut);
    await sleep(700);
    expect(await api1.stop('SIGKILL')).toBe(null);
    const first = await Promise.all(inFlight);
    const cut = first.filter((status) => status !== 200);
    console.log(`firewall PUTs as api1 was killed: ${JSON.stringify(first)}`);
    expect(cut.length).toBeGreaterThan(0);
    expect(cut.filter((status) => status !== 502 && status !== 'broken')).toEqual([]);
    // The client's retry of the same PUT: the other api processes take it.
    for (const _ of cut) {
      const again = await mix.client.call(putPlainVmFirewall, {
        params: { id: mix.vmId },
        body: { rules: [...rules] },
      });
      expect(again.body.rules).toEqual(rules);
    }
    await api1.start();
    phase('api1 killed mid-request and started again');

    // Only worker1 works, so it is the one provisioning when it is killed.
    expect(await worker2.stop('SIGTERM')).toBe(0);
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    const provisionJobs = async (agentId: string) =>
      (
        await db.query(
          `select state, retry_count from pgboss.job
           where name = 'agent.provision' and data->>'agentId' = $1`,
          [agentId],
        )
      ).rows;
    const agent = (
      await mix.client.call(createAgent, {
        body: { name: 'crash', size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
    await waitFor(
      async () => (await provisionJobs(agent.id))[0]?.state === 'active',
      30_000,
      'the provisioning job taken',
    );
    expect(await worker1.stop('SIGKILL')).toBe(null);
    // Killed mid-job: the job is still active, the Agent still provisioning.
    expect(await provisionJobs(agent.id)).toEqual([{ state: 'active', retry_count: 0 }]);
    const row = await db.query('select state from agents where id = $1', [agent.id]);
    expect(row.rows[0].state).toBe('provisioning');
    await Promise.all([worker1.start(), worker2.start()]);
    // The job's heartbeat stops; it is failed and tried again, and the Agent converges.
    await mix.agentIn(agent.id, 'running', 120_000);
    expect(await provisionJobs(agent.id)).toEqual([{ state: 'completed', retry_count: 1 }]);
    phase('worker1 killed mid-provisioning, the Agent running');

    // Nothing orphaned or made twice: one machine for each row, one row for each machine.
    const rows = await db.query(
      'select id, state from agents union all select id, state from plain_vms order by id',
    );
    await db.end();
    const machines = await cluster.machines();
    expect(machines.map((m) => m.id).sort()).toEqual(rows.rows.map((r) => r.id));
    expect(rows.rows.map((r) => r.state)).toEqual(rows.rows.map(() => 'running'));
    expect(machines.map((m) => m.status)).toEqual(machines.map(() => 'running'));
    expect(failures).toEqual([]);
    expect(cluster.logs.filter((line) => !line.startsWith('haproxy'))).toEqual([]);
  }, 300_000);
});
