import type { Agent } from '@svc/contract';
import { createAgent, getAgent, openAgentGateway } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_VERSION } from '../../../cli/src/version.js';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { gatewayCookie, openTerminal, type Terminal } from '../../test/gateway-terminal.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

/**
 * `svc` by its bare name in a local Agent's terminal (the browser's terminal through the edge, a
 * login shell whose profile sets PATH anew), as on an Incus or Hetzner Agent: the built `svc`.
 */
describe("svc in a local Agent's terminal", () => {
  let server: EdgeServer;
  let owner: TestClient;
  let agent: Agent;
  let shell: Terminal;

  beforeAll(async () => {
    server = await startEdgeServer();
    owner = server.t.newClient();
    await signUpUser(owner);
    const created = await owner.call(createAgent, {
      body: {
        name: 'terminal svc',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      },
    });
    const id = created.body.id as string;
    await waitFor(
      async () => (await owner.call(getAgent, { params: { id } })).body.status === 'running',
      60_000,
      'running',
    );
    agent = (await owner.call(getAgent, { params: { id } })).body as Agent;
    const link = (await owner.call(openAgentGateway, { params: { id } })).body.url as string;
    shell = await openTerminal(agent.url, await gatewayCookie(agent.url, link));
  }, 120_000);
  afterAll(async () => {
    shell?.close();
    await server?.close();
  });

  it('finds svc on PATH, running the build, and it talks to the service as this Agent', async () => {
    const found = await shell.run('command -v svc');
    expect(found.code).toBe(0);
    expect(found.output.trim()).toMatch(/\/bin\/svc$/);
    // The shim runs dist/svc.mjs, never the TypeScript sources.
    expect((await shell.run('cat "$(command -v svc)"')).output).toMatch(
      /packages\/cli\/dist\/svc\.mjs/,
    );
    expect(await shell.run('svc --version')).toEqual({ output: `${CLI_VERSION}\n`, code: 0 });
    const where = await shell.run('svc where');
    expect(where.code).toBe(0);
    expect(where.output).toContain(`service: ${server.baseUrl}`);
    expect(where.output).toContain(`agent:   ${agent.id}`);
    // Node beside it is the one the platform runs svc with.
    expect((await shell.run('node --version')).output.trim()).toBe(process.version);
  });
});
