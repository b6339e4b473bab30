import { createAgent, getAgent, resizeAgent, startAgent, stopAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { openAtOnce } from '../../test/first-use.js';
import { createIncusProject, INCUS_SOCKET, incusContext } from '../../test/incus.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import type { Instance } from '../adapters/compute/incus/incus-instance.js';

// A stopped Agent resized small → medium on Incus (INCUS_SIZE_FACTOR=0.25: 1 GiB → 2 GiB of
// memory, 20 → 40 GiB of disk) boots with the new limits, as its instance and its own
// /proc/meminfo say; back to small is refused, the disk being smaller.

describe('Resize on Incus', { timeout: 600_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let server: EdgeServer<TestContext>;
  let client: TestClient;
  let incus: IncusClient;

  beforeAll(async () => {
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    server = await startEdgeServer({ host: '0.0.0.0', context: incusContext(project.name) });
    client = server.t.client;
    await signUpUser(client);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    incus?.close();
    await project?.remove();
  });

  const status = async (id: string) => (await client.call(getAgent, { params: { id } })).body;

  it('gives a stopped Agent the new limits in place and refuses a smaller disk', async () => {
    const body = { name: 'resized', size: 'small', region: 'eu', billingType: 'metered' } as const;
    const { id } = (await client.call(createAgent, { body })).body;
    const params = { id };
    await openAtOnce(client, id, 240_000);

    // Running: refused.
    expect(await client.callError(resizeAgent, { params, body: { size: 'medium' } })).toMatchObject(
      { status: 409, body: { error: 'invalid_state' } },
    );

    await client.call(stopAgent, { params });
    await waitFor(async () => (await status(id)).status === 'stopped', 120_000, 'stopped');
    const resized = (await client.call(resizeAgent, { params, body: { size: 'medium' } })).body;
    expect(resized.size).toBe('medium');
    expect(resized.limits).toEqual({ vcpu: 1, ramMb: 2048, diskGb: 40 });

    const instance = await incus.call<Instance>('GET', `/1.0/instances/svc-${id}`);
    expect(instance.config['limits.cpu']).toBe('1');
    expect(instance.config['limits.memory']).toBe('2048MiB');
    expect(instance.devices.root?.size).toBe('40GiB');

    expect(await client.callError(resizeAgent, { params, body: { size: 'small' } })).toMatchObject({
      status: 400,
      body: { error: 'disk_shrink' },
    });
    expect((await status(id)).size).toBe('medium');

    await client.call(startAgent, { params });
    await openAtOnce(client, id, 180_000);
    // lxcfs shows the container its own limits: 2 GiB of memory now, one CPU.
    const meminfo = await incus.exec(`svc-${id}`, ['cat', '/proc/meminfo']);
    const totalKb = Number(/MemTotal:\s+(\d+) kB/.exec(meminfo.stdout)?.[1]);
    expect(totalKb).toBe(2048 * 1024);
    const nproc = await incus.exec(`svc-${id}`, ['nproc']);
    expect(nproc.stdout.trim()).toBe('1');
  });
});
