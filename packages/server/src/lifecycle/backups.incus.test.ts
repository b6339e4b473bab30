import { createAgent, getAgent, updateAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackupDays } from '../../test/backup-days.js';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { createIncusProject, INCUS_SOCKET, incusContext } from '../../test/incus.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';

// Daily backups of one Agent on Incus, the job run as the test's clock moves a day at a time:
// with keep 2, three days leave the newest two, as instance snapshots too.

describe('Daily backups on Incus', { timeout: 600_000 }, () => {
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

  it('keeps exactly `keep` backups', async () => {
    const body = {
      name: 'backed-up',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
    } as const;
    const { id } = (await client.call(createAgent, { body })).body;
    await waitFor(
      async () => (await client.call(getAgent, { params: { id } })).body.status === 'running',
      240_000,
      'running',
    );
    await client.call(updateAgent, {
      params: { id },
      body: { backups: { enabled: true, keep: 2 } },
    });
    const { names, snapshots } = await runBackupDays(
      server.t,
      client,
      { kind: 'agent', id },
      3,
      180_000,
    );
    expect(snapshots.map((s) => s.name)).toEqual(names.slice(-2).reverse());
    const held = await incus.call<string[]>('GET', `/1.0/instances/svc-${id}/snapshots`);
    expect(held).toHaveLength(2);
  });
});
