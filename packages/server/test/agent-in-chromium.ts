import { type Agent, createAgent, getAgent } from '@svc/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './browser.js';
import { type EdgeServer, startEdgeServer } from './edge-server.js';
import { signUpUser } from './test-context.js';
import { waitFor } from './wait.js';

/**
 * For the enclosing describe block: the service with its dashboard on the local driver, a user
 * signed up on its client, a metered small Agent of theirs named `name`, running, and Chromium;
 * filled in before the block's own beforeAll hooks, closed after its tests.
 */
export function agentInChromium(name: string): {
  readonly server: EdgeServer;
  readonly browser: Browser;
  readonly agent: Agent;
  /** The signed-up user's e-mail address. */
  readonly email: string;
} {
  const setup = {} as { server: EdgeServer; browser: Browser; agent: Agent; email: string };
  beforeAll(async () => {
    setup.server = await startEdgeServer({ dashboard: true });
    const { client } = setup.server.t;
    setup.email = (await signUpUser(client)).user.email;
    const created = await client.call(createAgent, {
      body: { name, size: 'small', region: 'eu', billingType: 'metered' },
    });
    const detail = async () =>
      (await client.call(getAgent, { params: { id: created.body.id } })).body;
    await waitFor(async () => (await detail()).status === 'running', 30_000);
    setup.agent = await detail();
    setup.browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await setup.browser?.close();
    await setup.server?.close();
  });
  return setup;
}
