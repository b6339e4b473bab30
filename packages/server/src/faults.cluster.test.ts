import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../test/cluster.js';
import { appsStandIn, ClusterMix, timings } from '../test/cluster-mix.js';
import { startPrivatePostgres } from '../test/private-postgres.js';
import type { StandIn } from '../test/stand-in-provider.js';
import { TestClock } from '../test/test-clock.js';
import { waitFor } from '../test/wait.js';
import { S3ObjectStore } from './adapters/object-store/s3-object-store.js';

// `npm run test:cluster`: the cluster of cluster.cluster.test.ts on a PostgreSQL server of its
// own, which is restarted and then stopped for 20 s under the steady mix; then the S3 stand-in
// is stopped for 20 s while bundles are published.

/** How long the database, and then S3, stay away. */
const OUTAGE_MS = 20_000;
/**
 * No answer may take longer than this while the database is away: the pool's connect timeout
 * (5 s) and a margin for this shared machine.
 */
const MAX_ANSWER_MS = 8_000;
/** A firewall PUT's answer while an earlier one, which the outage cut short, seems under way. */
const FIREWALL_BUSY =
  'answered 409, not 200: {"error":"invalid_state","detail":"another firewall change is under way; try again"}';
/** How a refusal for the database's absence reads, through `TestClient.call`. */
const UNAVAILABLE = /answered 503, not \d+: \{"error":"unavailable"\}$/;

describe('the database and S3 going away under load', () => {
  let postgres: Awaited<ReturnType<typeof startPrivatePostgres>>;
  let cluster: Cluster;
  let standIn: StandIn | undefined;
  const failures: string[] = [];
  let mix: ClusterMix;
  const began = Date.now();
  const phase = (name: string) =>
    console.log(`${name}: ${((Date.now() - began) / 1000).toFixed(1)} s`);

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    cluster = await startCluster(postgres.url, {
      env: async (url) => {
        standIn = await appsStandIn(url);
        return standIn.env();
      },
    });
    mix = new ClusterMix(cluster, failures);
    await mix.setUp();
    phase('cluster on its own PostgreSQL started');
  }, 300_000);

  afterAll(async () => {
    await postgres?.start().catch(() => {});
    await cluster?.stop();
    await standIn?.close();
    await postgres?.remove();
  });

  /** Runs the mix's moves in loops until `stop` resolves; what they were refused is kept. */
  const underLoad = async (moves: (() => Promise<unknown>)[], stop: Promise<unknown>) => {
    let running = true;
    const refusals: string[] = [];
    const loop = async (move: () => Promise<unknown>) => {
      while (running) {
        try {
          await move();
        } catch (error) {
          refusals.push((error as Error).message);
          await sleep(1_000);
        }
      }
    };
    const loops = Promise.all(moves.map(loop));
    await stop.finally(() => {
      running = false;
    });
    await loops;
    return refusals;
  };

  it('answers 503 unavailable while PostgreSQL restarts and is away, and loses nothing', async () => {
    const db = () => new pg.Client({ connectionString: cluster.databaseUrl });
    const pids = cluster.processes.map((p) => p.pid);
    const from = Date.now();
    const readiness: { name: string; status: number; body: string }[] = [];
    const faults = (async () => {
      await sleep(5_000);
      // pg_ctl restart: a fast stop and a start.
      await postgres.stop();
      await postgres.start();
      phase('PostgreSQL restarted');
      await sleep(5_000);
      await postgres.stop();
      phase('PostgreSQL stopped');
      const stoppedAt = Date.now();
      while (Date.now() - stoppedAt < OUTAGE_MS) {
        for (const p of cluster.processes.filter((p) => p.role !== 'worker')) {
          const res = await fetch(`http://127.0.0.1:${p.port}/readyz`).catch(() => undefined);
          readiness.push({
            name: p.name,
            status: res?.status ?? 0,
            body: (await res?.text()) ?? `not listening (exited: ${p.exited})`,
          });
        }
        await sleep(1_000);
      }
      await postgres.start();
      phase('PostgreSQL started again');
      await waitFor(
        () => fetch(`${cluster.url}/readyz`).then((res) => res.ok),
        30_000,
        'ready again',
      ).catch((error: Error) => {
        const exits = cluster.processes.map((p) => `${p.name} exited: ${p.exited}`);
        throw new Error(`${error.message}; ${exits.join(', ')}\n${cluster.logs.join('\n')}`);
      });
      await sleep(5_000);
    })();
    const refusals = await underLoad(
      [
        () => mix.agentLife(),
        () => mix.agentLife(),
        () => mix.listAndFirewall(),
        async () => {
          await mix.tokenRead();
          await sleep(200);
        },
      ],
      faults,
    );
    phase('the mix stopped');

    // While it was away: 503 unavailable, quickly; never a 500.
    const answers = timings.filter((t) => t.at >= from);
    console.log(
      `answers while PostgreSQL restarted and was away: ${answers.length}, ` +
        `503: ${answers.filter((a) => a.status === 503).length}, ` +
        `slowest ${Math.max(...answers.map((a) => a.ms))} ms; refused moves: ${refusals.length}`,
    );
    const logged = cluster.logs.filter((line) => !line.startsWith('haproxy'));
    // The outage is logged at error (the job queue's lost connections): what, and how often.
    const said = new Map<string, number>();
    for (const line of logged) {
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 120);
      said.set(msg, (said.get(msg) ?? 0) + 1);
    }
    console.log(`logged at error around the outage: ${JSON.stringify(Object.fromEntries(said))}`);
    expect(cluster.processes.filter((p) => p.exited !== undefined).map((p) => p.name)).toEqual([]);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    expect(answers.filter((a) => a.ms > MAX_ANSWER_MS)).toEqual([]);
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(10);
    expect(failures.filter((f) => !f.endsWith(': 503 {"error":"unavailable"}'))).toEqual([]);
    // Refused for the outage, or for a firewall change it cut short (its marker outlives it).
    expect(refusals.filter((r) => !UNAVAILABLE.test(r) && !r.endsWith(FIREWALL_BUSY))).toEqual([]);
    expect(readiness.length).toBeGreaterThan(30);
    for (const answer of readiness) {
      expect(answer.status, answer.name).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ checks: { database: false } });
    }

    // Every process recovered by itself: the same ones serve and work again.
    expect(cluster.processes.map((p) => p.pid)).toEqual(pids);
    await mix.agentLife();

    // Every accepted move completed: no machine in between states or in error, one provisioning
    // job for each Agent, one machine for each row and none without one.
    const client = db();
    await client.connect();
    const states = async () =>
      (
        await client.query(
          'select id, state from agents union all select id, state from plain_vms order by id',
        )
      ).rows as { id: string; state: string }[];
    await waitFor(
      async () => (await states()).every((r) => r.state === 'running' || r.state === 'stopped'),
      120_000,
      'every machine running or stopped',
    );
    const rows = await states();
    const provisions = await client.query(
      `select data->>'agentId' as id, count(*)::int as n, min(state) as state from pgboss.job
       where name = 'agent.provision' group by 1 having count(*) > 1 or min(state) <> 'completed'`,
    );
    const failed = await client.query(
      `select name, count(*)::int from pgboss.job where state = 'failed' group by 1`,
    );
    await client.end();
    expect(provisions.rows).toEqual([]);
    expect(failed.rows).toEqual([]);
    const machines = await cluster.machines();
    expect(machines.map((m) => m.id).sort()).toEqual(rows.map((r) => r.id));
    const byId = new Map(machines.map((m) => [m.id, m.status]));
    for (const row of rows) {
      expect(byId.get(row.id), row.id).toBe(row.state === 'running' ? 'running' : 'off');
    }
    console.log(`moves completed around the outage: ${JSON.stringify(mix.counts)}`);
    expect(mix.counts['agent create']).toBeGreaterThan(1);
  }, 400_000);

  it('fails or completes each publish while S3 is away, and no version names a missing object', async () => {
    const before = { ...mix.counts };
    const published = mix.published.length;
    const faults = (async () => {
      await sleep(3_000);
      await cluster.s3.stop();
      phase('S3 stopped');
      await sleep(OUTAGE_MS);
      await cluster.s3.start();
      phase('S3 started again');
      await sleep(5_000);
    })();
    const failuresBefore = failures.length;
    // One publisher: an Agent has one open staging, a second `stage` cancels the first.
    const refusals = await underLoad([() => mix.publish()], faults);
    console.log(
      `publishes around S3's absence: ${mix.published.length - published} completed, ` +
        `${refusals.length} failed: ${JSON.stringify([...new Set(refusals)].slice(0, 5))}`,
    );
    // A clear failure: the upload refused at S3's address, or the service's own error envelope.
    expect(
      failures.slice(failuresBefore).filter((f) => !f.endsWith(': 503 {"error":"unavailable"}')),
    ).toEqual([]);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal).toMatch(/fetch failed|answered 503, not 201: \{"error":"unavailable"\}/);
    }
    expect((mix.counts['bundle publish'] ?? 0) - (before['bundle publish'] ?? 0)).toBeGreaterThan(
      1,
    );

    // Every published version's objects are in the store.
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    const objects = await client.query(
      `select tarball_sha256 as sha256 from bundle_versions
       union select sha256 from bundle_files`,
    );
    const versions = await client.query('select count(*)::int as n from bundle_versions');
    await client.end();
    expect(versions.rows[0].n).toBe(mix.published.length);
    const store = new S3ObjectStore(
      {
        bucket: 'bundles',
        region: 'us-east-1',
        endpoint: cluster.s3.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      },
      new TestClock(),
    );
    const missing: string[] = [];
    for (const { sha256 } of objects.rows) {
      if (!(await store.stat(sha256))) missing.push(sha256);
    }
    expect(missing).toEqual([]);
    expect(objects.rows.length).toBeGreaterThan(2 * mix.published.length);
  }, 200_000);
});
