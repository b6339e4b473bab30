import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { openAtOnce, sshAtOnce } from '../../test/first-use.js';
import { createPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

// `running` means usable (the spec's "server up, editor reachable"): on the local driver, through
// the service's edge, an Agent's URL answers from its gateway the instant the API first says
// `running`, after every move that ends there; a Plain VM's SSH server sends its banner.

describe('a machine is usable the moment it is running (local driver)', () => {
  let server: EdgeServer;
  let client: TestClient;

  beforeAll(async () => {
    server = await startEdgeServer();
    client = server.t.client;
    await signUpUser(client);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  const post = async (path: string, body?: object) => {
    const res = await client.post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body as { id: string };
  };
  const stopped = (id: string) =>
    waitFor(
      async () => (await client.get(`/api/agents/${id}`)).body.status === 'stopped',
      30_000,
      'stopped',
    );

  it("answers an Agent's URL at once after create, start, restart and clone", async () => {
    for (let round = 1; round <= 3; round += 1) {
      const { id } = await post('/api/agents', {
        name: `ready ${round}`,
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      });
      await openAtOnce(client, id, 60_000);
      await post(`/api/agents/${id}/restart`);
      await openAtOnce(client, id, 60_000);
      await post(`/api/agents/${id}/stop`);
      await stopped(id);
      await post(`/api/agents/${id}/start`);
      await openAtOnce(client, id, 60_000);
      if (round === 3) {
        const clone = await post(`/api/agents/${id}/clone`, {
          name: 'ready clone',
          size: 'small',
          billingType: 'metered',
        });
        await openAtOnce(client, clone.id, 60_000);
      }
    }
  }, 240_000);

  it('answers SSH on the address the API reports the moment a Plain VM is running', async () => {
    await sshAtOnce(client, await createPlainVm(client, 'ready-vm'), 60_000);
  }, 90_000);
});
