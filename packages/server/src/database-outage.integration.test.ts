import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Agent, createAgent, getAgent, listAgents, signUp } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivatePostgres } from '../test/private-postgres.js';
import {
  freePort,
  serviceClient,
  startService,
  stopLocalMachines,
  stopService,
} from '../test/service-process.js';
import type { TestClient } from '../test/test-client.js';
import { waitFor } from '../test/wait.js';

/** How long the database stays away. */
const OUTAGE_MS = 20_000;
/** No answer may take longer than this while it is away (the pool's connect timeout is 5 s). */
const MAX_ANSWER_MS = 6_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The real service in its own process, on a PostgreSQL server of the test's own that the test
// stops for 20 s and starts again: meanwhile every request answers 503 `unavailable` with
// Retry-After (never 500, never a hang) and /readyz says not ready; afterwards the same process
// answers again, with the same session, and its jobs run, without a restart.

describe('the database going away under a running service', () => {
  let postgres: Awaited<ReturnType<typeof startPrivatePostgres>>;
  let child: ChildProcess;
  let dataDir: string;
  let client: TestClient;
  let base: string;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-outage-'));
    const port = await freePort();
    base = `http://localhost:${port}`;
    child = startService({
      DATABASE_URL: postgres.url,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
    });
    const service = serviceClient(base);
    await service.ready();
    client = service.client;
    await client.call(signUp, {
      body: { email: 'outage@example.com', password: 'outage test pw 1', name: 'Outage' },
    });
  }, 120_000);

  afterAll(async () => {
    if (child) await stopService(child, 'SIGTERM');
    await postgres?.remove();
    if (dataDir) {
      await stopLocalMachines(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  const BODY = { name: 'steady', size: 'small', region: 'eu', billingType: 'metered' } as const;
  const running = (id: string) =>
    waitFor(
      async () =>
        ((await client.call(getAgent, { params: { id } })).body as Agent).status === 'running',
      60_000,
      `Agent ${id} running`,
    );

  it('answers 503 unavailable with Retry-After while it is away, and recovers without a restart', async () => {
    const before = (await client.call(createAgent, { body: BODY })).body;
    await running(before.id);

    await postgres.stop();
    const stoppedAt = performance.now();
    const answers: {
      what: string;
      status: number;
      ms: number;
      body: string;
      retry: string | null;
    }[] = [];
    const ask = async (what: string, send: () => Promise<Response>) => {
      const started = performance.now();
      const res = await send();
      answers.push({
        what,
        status: res.status,
        ms: performance.now() - started,
        body: await res.text(),
        retry: res.headers.get('retry-after'),
      });
    };
    while (performance.now() - stoppedAt < OUTAGE_MS) {
      await Promise.all([
        ask('list', () => fetch(`${base}/api/agents`, { headers: cookieHeader(client) })),
        ask('create', () =>
          fetch(`${base}/api/agents`, {
            method: 'POST',
            headers: {
              ...cookieHeader(client),
              'content-type': 'application/json',
              origin: base,
            },
            body: JSON.stringify(BODY),
          }),
        ),
        ask('readyz', () => fetch(`${base}/readyz`)),
      ]);
      await sleep(1_000);
    }
    await postgres.start();

    expect(answers.length).toBeGreaterThan(30);
    for (const answer of answers) {
      expect(answer.ms, `${answer.what} took ${Math.round(answer.ms)} ms`).toBeLessThan(
        MAX_ANSWER_MS,
      );
      expect(answer.status, `${answer.what}: ${answer.body}`).toBe(503);
      if (answer.what === 'readyz') {
        expect(JSON.parse(answer.body)).toMatchObject({
          status: 'not_ready',
          checks: { database: false },
        });
      } else {
        expect(JSON.parse(answer.body)).toEqual({ error: 'unavailable' });
        expect(answer.retry).toBe('5');
      }
    }

    // Back: the same process, the same session; its jobs run again.
    await waitFor(
      () =>
        fetch(`${base}/readyz`).then(
          (res) => res.ok,
          () => false,
        ),
      30_000,
      'ready again',
    );
    const listed = await client.call(listAgents, {});
    expect(listed.body.map((agent) => agent.id)).toContain(before.id);
    const after = (await client.call(createAgent, { body: BODY })).body;
    await running(after.id);
    expect(child.exitCode).toBeNull();
  }, 120_000);
});

/** The client's cookies as a header, for the raw requests sent while the database is away. */
const cookieHeader = (client: TestClient) => ({
  cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
});
