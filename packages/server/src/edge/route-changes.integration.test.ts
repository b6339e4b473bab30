import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Agent, createAgent, deleteAgent, getAgent, signUp, stopAgent } from '@svc/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serviceClient, startService, stopService } from '../../test/service-process.js';
import type { TestClient } from '../../test/test-client.js';
import { databaseKinds, testDatabaseUrl } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

// Two real processes on one PostgreSQL database and one data directory: the whole service, and
// a second one serving only the edge. A stop or a destroy through the first must reach the
// second's route cache at once (LISTEN/NOTIFY), not when its entry's 30 s run out.

if (!databaseKinds.includes('postgres')) {
  it('needs TEST_DATABASE_URL (PostgreSQL): two processes cannot share PGlite', () => {
    throw new Error('TEST_DATABASE_URL is unset: the two-edge test on PostgreSQL did not run');
  });
}

/** One answer of the second process's edge for the Agent's host. */
const viaEdge = (port: number, host: string, pathname: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: pathname, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end();
  });

if (databaseKinds.includes('postgres'))
  describe('route changes across processes', () => {
    const database = `svc_routes_${randomBytes(6).toString('hex')}`;
    const children: ChildProcess[] = [];
    let dataDir: string;
    let client: TestClient;
    let edgePort: number;

    beforeAll(async () => {
      const admin = new pg.Client({ connectionString: testDatabaseUrl('postgres') });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
      const url = new URL(testDatabaseUrl('postgres'));
      url.pathname = `/${database}`;
      dataDir = await mkdtemp(path.join(tmpdir(), 'svc-routes-'));
      const [port, secondPort] = [await freePort(), await freePort()];
      edgePort = secondPort;
      const base = `http://localhost:${port}`;
      const env = {
        DATABASE_URL: url.toString(),
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PUBLIC_URL: base,
      };
      // One after the other: the first applies the migrations.
      children.push(startService({ ...env, PORT: String(port) }));
      const whole = serviceClient(base);
      await whole.ready();
      children.push(startService({ ...env, PORT: String(edgePort) }, ['--role=edge']));
      await serviceClient(`http://127.0.0.1:${edgePort}`).ready();
      client = whole.client;
      await client.call(signUp, {
        body: { email: 'routes@example.com', password: 'two edges pw 1', name: 'Routes' },
      });
    }, 180_000);

    afterAll(async () => {
      for (const child of children) await stopService(child, 'SIGTERM');
      await rm(dataDir, { recursive: true, force: true });
      const admin = new pg.Client({ connectionString: testDatabaseUrl('postgres') });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
    });

    /** A running Agent whose route the second process's edge has cached. */
    const routedAgent = async () => {
      const { id } = (
        await client.call(createAgent, {
          body: { name: 'routed', size: 'small', region: 'eu', billingType: 'metered' },
        })
      ).body;
      const agent = await waitFor(
        async () => {
          const current = (await client.call(getAgent, { params: { id } })).body as Agent;
          return current.status === 'running' && current;
        },
        60_000,
        'running',
      );
      const host = new URL(agent.url).host;
      await waitFor(
        async () => (await viaEdge(edgePort, host, '/_svc/health')).status === 200,
        30_000,
        'the gateway through the second edge',
      );
      return { agent, host };
    };

    /** How long after `change` the second edge answers its own page instead of the gateway. */
    const untilRerouted = async (host: string, change: () => Promise<unknown>) => {
      const started = performance.now();
      await change();
      for (;;) {
        const answer = await viaEdge(edgePort, host, '/_svc/health');
        if (answer.status !== 200) return { ms: performance.now() - started, answer };
        if (performance.now() - started > 10_000) throw new Error('still routed after 10 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    it('stops routing to a stopped Agent within a second, with the not-running page', async () => {
      const { agent, host } = await routedAgent();
      const { ms, answer } = await untilRerouted(host, () =>
        client.call(stopAgent, { params: { id: agent.id } }),
      );
      console.log(`second edge rerouted ${Math.round(ms)} ms after the stop's answer`);
      expect(ms).toBeLessThan(1_000);
      // Its own page for an Agent that is not running, not a failed proxying (502).
      expect(answer.status).toBe(503);
      expect(answer.body).toContain('This Agent is not running');
    }, 120_000);

    it('stops routing to a destroyed Agent within a second', async () => {
      const { agent, host } = await routedAgent();
      const { ms, answer } = await untilRerouted(host, () =>
        client.call(deleteAgent, { params: { id: agent.id } }),
      );
      console.log(`second edge rerouted ${Math.round(ms)} ms after the destroy's answer`);
      expect(ms).toBeLessThan(1_000);
      expect([503, 404]).toContain(answer.status);
    }, 120_000);
  });
