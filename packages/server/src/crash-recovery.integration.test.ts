import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Agent } from '@svc/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { TestClient } from '../test/test-client.js';
import { TEST_ENV } from '../test/test-context.js';
import { parentEnv } from '../test/test-db.js';
import { waitFor } from '../test/wait.js';

const MAIN = path.join(import.meta.dirname, 'main.ts');

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** The real service in its own process, as `npm start` runs it. */
function startService(env: Record<string, string>, args: readonly string[] = []): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...parentEnv(), ...TEST_ENV, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('a service killed mid-operation recovers', () => {
  let dataDir = '';
  const processes: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    // Machine processes are detached (they outlive the service, as VMs do): stop them too.
    const machines = path.join(dataDir, 'machines');
    for (const id of await readdir(machines).catch(() => [] as string[])) {
      try {
        const { pid } = JSON.parse(await readFile(path.join(machines, id, 'machine.json'), 'utf8'));
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes stopping and destroying, times provisioning out, and leaves no machine without an Agent', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-crash-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      PROVISION_TIMEOUT_MS: '4000',
    };
    const http = { request: (p: string, init?: RequestInit) => fetch(`${base}${p}`, init) };
    const client = new TestClient(http as never, base);
    const up = () =>
      waitFor(
        () =>
          fetch(`${base}/readyz`).then(
            (r) => r.ok,
            () => false,
          ),
        30_000,
        'service up',
      );

    const first = startService(env);
    processes.push(first);
    await up();
    await client.post('/api/auth/sign-up', {
      email: 'crash@example.com',
      password: 'crash test pw',
      name: 'Crash',
    });
    const create = async () =>
      (
        await client.post('/api/agents', {
          name: 'crash',
          size: 'small',
          region: 'eu',
          billingType: 'metered',
        })
      ).body as Agent;
    const stateOf = async (id: string) => {
      const res = await client.get(`/api/agents/${id}`);
      return res.status === 404 ? 'removed' : res.body.status;
    };
    const toStop = await create();
    const toDestroy = await create();
    for (const agent of [toStop, toDestroy])
      await waitFor(async () => (await stateOf(agent.id)) === 'running', 30_000);

    // Three operations in flight, then the process dies without any chance to clean up. They are
    // started on a process that runs no jobs, so none of them can finish before the kill.
    first.kill('SIGTERM');
    await new Promise((resolve) => first.once('exit', resolve));
    const apiOnly = startService(env, ['--role=api']);
    processes.push(apiOnly);
    await up();
    const provisioning = await create();
    expect((await client.post(`/api/agents/${toStop.id}/stop`)).status).toBe(200);
    expect((await client.delete(`/api/agents/${toDestroy.id}`)).status).toBe(200);
    expect(await stateOf(provisioning.id)).toBe('provisioning');
    expect(await stateOf(toStop.id)).toBe('stopping');
    expect(await stateOf(toDestroy.id)).toBe('destroying');
    apiOnly.kill('SIGKILL');
    await new Promise((resolve) => apiOnly.once('exit', resolve));
    await expect(fetch(`${base}/readyz`)).rejects.toThrow(TypeError);

    // A machine nobody owns, as a crash between the provider and our commit would leave.
    const orphan = randomUUID();
    await mkdir(path.join(dataDir, 'machines', orphan, 'home'), { recursive: true });
    await writeFile(
      path.join(dataDir, 'machines', orphan, 'machine.json'),
      JSON.stringify({
        id: orphan,
        status: 'off',
        labels: { managedBy: 'svc', kind: 'agent', agentId: orphan },
        env: {},
      }),
    );
    // Let the provisioning deadline pass while the service is down.
    await new Promise((resolve) => setTimeout(resolve, 4_500));

    const second = startService(env);
    processes.push(second);
    await up();
    await waitFor(async () => (await stateOf(toStop.id)) === 'stopped', 30_000, 'stop resumed');
    await waitFor(
      async () => (await stateOf(toDestroy.id)) === 'removed',
      30_000,
      'destroy resumed',
    );
    await waitFor(
      async () => (await stateOf(provisioning.id)) === 'error',
      30_000,
      'provisioning timed out',
    );
    expect((await client.get(`/api/agents/${provisioning.id}`)).body.statusReason).toBe(
      'provisioning_timeout',
    );
    await waitFor(
      () => !existsSync(path.join(dataDir, 'machines', orphan)),
      30_000,
      'orphan removed',
    );

    const machines = await readdir(path.join(dataDir, 'machines'));
    const agents = ((await client.get('/api/agents')).body as Agent[]).map((a) => a.id);
    expect(machines.every((id) => agents.includes(id))).toBe(true);
    expect(machines).toEqual([toStop.id]);

    second.kill('SIGTERM');
    await new Promise((resolve) => second.once('exit', resolve));
  }, 180_000);
});
