import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Agent } from '@svc/contract';
import {
  cloneAgent,
  createAgent,
  deleteAgent,
  getAgent,
  getSelfAgent,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signUpUser, type TestContext } from '../../../test/test-context.js';
import { waitFor } from '../../../test/wait.js';
import { createLogger } from '../../logger.js';
import { LocalComputeDriver } from './local-compute-driver.js';

describe('local compute driver under the service', () => {
  let t: TestContext;
  let driver: LocalComputeDriver;
  const client = () => t.client;

  beforeAll(async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const root = path.join(await mkdtemp(path.join(tmpdir(), 'svc-machines-')), 'machines');
    driver = new LocalComputeDriver(root, createLogger({ logLevel: 'silent' }));
    t = await createTestContext('pglite', { overrides: { compute: driver } });
    await signUpUser(t.client);
  });
  afterAll(() => t?.close());

  const status = async (id: string) =>
    (await client().call(getAgent, { params: { id } })).body.status;

  it('runs an Agent as a real process with agent.env in its home, stops, starts and destroys it', async () => {
    const created = await client().call(createAgent, {
      body: {
        name: 'local one',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      },
    });
    expect(created.status).toBe(201);
    const agent = created.body as Agent;
    expect(agent.provider).toBe('local');
    await waitFor(async () => (await status(agent.id)) === 'running', 10_000);
    expect(await driver.isProcessAlive(agent.id)).toBe(true);

    const home = driver.homeOf(agent.id);
    const envPath = path.join(home, '.crabglamp/agent.env');
    expect((await stat(envPath)).mode & 0o777).toBe(0o600);
    const env = Object.fromEntries(
      (await readFile(envPath, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2)),
    );
    expect(env).toMatchObject({ SVC_API_URL: t.ctx.config.http.publicUrl, SVC_AGENT_ID: agent.id });
    const auth = { headers: { authorization: `Bearer ${env.SVC_HMAC_TOKEN}` } };
    expect(await t.newClient().call(getSelfAgent, {}, auth)).toMatchObject({
      status: 200,
      body: { id: agent.id },
    });

    await writeFile(path.join(home, 'notes.txt'), 'kept across stop/start');
    await client().call(stopAgent, { params: { id: agent.id } });
    await waitFor(async () => (await status(agent.id)) === 'stopped', 10_000);
    expect(await driver.isProcessAlive(agent.id)).toBe(false);
    expect(await readFile(path.join(home, 'notes.txt'), 'utf8')).toBe('kept across stop/start');

    await client().call(startAgent, { params: { id: agent.id } });
    await waitFor(async () => (await status(agent.id)) === 'running', 10_000);
    expect(await driver.isProcessAlive(agent.id)).toBe(true);

    // A crashed machine process is restarted by the supervisor.
    const { pid } = JSON.parse(
      await readFile(path.join(driver.root, agent.id, 'machine.json'), 'utf8'),
    );
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => !(await driver.isProcessAlive(agent.id)), 5_000);
    await driver.supervise();
    expect(await driver.isProcessAlive(agent.id)).toBe(true);

    // Another driver on the same directory (a restarted service) finds the machine and its process.
    const again = new LocalComputeDriver(driver.root, createLogger({ logLevel: 'silent' }));
    expect(await again.listServers({ agentId: agent.id })).toEqual([
      expect.objectContaining({ id: agent.id, status: 'running' }),
    ]);
    expect(await again.isProcessAlive(agent.id)).toBe(true);

    // A clone starts from a copy of the source's home, with its own agent.env.
    const cloned = await client().call(cloneAgent, {
      params: { id: agent.id },
      body: {
        name: 'local copy',
        size: 'medium',
        billingType: 'metered',
      },
    });
    expect(cloned.status).toBe(201);
    await waitFor(async () => (await status(cloned.body.id)) === 'running', 10_000);
    const cloneHome = driver.homeOf(cloned.body.id);
    expect(await readFile(path.join(cloneHome, 'notes.txt'), 'utf8')).toBe(
      'kept across stop/start',
    );
    expect(await readFile(path.join(cloneHome, '.crabglamp/agent.env'), 'utf8')).toContain(
      `SVC_AGENT_ID=${cloned.body.id}`,
    );
    expect(await driver.isProcessAlive(cloned.body.id)).toBe(true);
    await client().call(deleteAgent, { params: { id: cloned.body.id } });
    await waitFor(
      async () =>
        (await client().send(getAgent, { params: { id: cloned.body.id } })).status === 404,
      10_000,
    );

    await client().call(deleteAgent, { params: { id: agent.id } });
    await waitFor(
      async () => (await client().send(getAgent, { params: { id: agent.id } })).status === 404,
      10_000,
    );
    expect(existsSync(path.join(driver.root, agent.id))).toBe(false);
    expect((await t.newClient().callError(getSelfAgent, {}, auth)).status).toBe(401);
  }, 60_000);
});
