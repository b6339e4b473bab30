import {
  cloneAgent,
  createAgent,
  getAgent,
  restartAgent,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, it } from 'vitest';
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

  const stopped = (id: string) =>
    waitFor(
      async () => (await client.call(getAgent, { params: { id } })).body.status === 'stopped',
      30_000,
      'stopped',
    );

  it("answers an Agent's URL at once after create, start, restart and clone", async () => {
    for (let round = 1; round <= 3; round += 1) {
      const { id } = (
        await client.call(createAgent, {
          body: { name: `ready ${round}`, size: 'small', region: 'eu', billingType: 'metered' },
        })
      ).body;
      await openAtOnce(client, id, 60_000);
      await client.call(restartAgent, { params: { id } });
      await openAtOnce(client, id, 60_000);
      await client.call(stopAgent, { params: { id } });
      await stopped(id);
      await client.call(startAgent, { params: { id } });
      await openAtOnce(client, id, 60_000);
      if (round === 3) {
        const clone = await client.call(cloneAgent, {
          params: { id },
          body: { name: 'ready clone', size: 'small', billingType: 'metered' },
        });
        await openAtOnce(client, clone.body.id, 60_000);
      }
    }
  }, 240_000);

  it('answers SSH on the address the API reports the moment a Plain VM is running', async () => {
    await sshAtOnce(client, await createPlainVm(client, 'ready-vm'), 60_000);
  }, 90_000);
});
