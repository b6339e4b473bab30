import {
  createAgent,
  getAgent,
  restartAgent,
  restartPlainVm,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { openAtOnce, sshAtOnce } from '../../test/first-use.js';
import { createIncusProject, incusContext } from '../../test/incus.js';
import { createPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

// `running` means usable on Incus (`npm run test:incus`): an Agent's URL, requested through the
// service's edge the instant the API first says `running`, is answered by its gateway in the
// container (after create, restart, stop and start); a Plain VM's SSH server, at the address
// the API reports, sends its banner at once.

describe('a machine on Incus is usable the moment it is running', { timeout: 300_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let server: EdgeServer<TestContext>;
  let client: TestClient;

  beforeAll(async () => {
    project = await createIncusProject();
    // On every address, so `svc` in the Agent reaches the service at the host's bridge address.
    server = await startEdgeServer({
      host: '0.0.0.0',
      context: incusContext(project.name),
    });
    client = server.t.client;
    await signUpUser(client);
  }, 120_000);

  afterAll(async () => {
    // How long each move waited for its machine after the driver's work (the README's numbers).
    const waits = server?.t.logs
      .entries()
      .filter((entry) => entry.msg === 'waited for an answer')
      .map((entry) => `${entry.state} ${entry.outcome} ${entry.waitedMs} ms`);
    console.info(`waits on Incus: ${waits?.join(', ')}`);
    await server?.close();
    await project?.remove();
  });

  it("answers an Agent's URL through the edge at once after create, restart and start", async () => {
    const { id } = (
      await client.call(createAgent, {
        body: { name: 'ready on incus', size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
    const params = { id };
    await openAtOnce(client, id, 180_000);
    for (let round = 0; round < 2; round += 1) {
      await client.call(restartAgent, { params });
      await openAtOnce(client, id, 120_000);
    }
    await client.call(stopAgent, { params });
    await waitFor(
      async () => (await client.call(getAgent, { params })).body.status === 'stopped',
      120_000,
      'stopped',
    );
    await client.call(startAgent, { params });
    await openAtOnce(client, id, 120_000);
  });

  it('answers SSH with its banner on the address the API reports the moment a Plain VM is running', async () => {
    const id = await createPlainVm(client, 'ready-vm');
    await sshAtOnce(client, id, 180_000);
    await client.call(restartPlainVm, { params: { id } });
    await sshAtOnce(client, id, 120_000);
  });
});
