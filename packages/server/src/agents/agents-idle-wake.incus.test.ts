import {
  type Agent,
  createAgent,
  getAgent,
  type MachineState,
  openAgentGateway,
  startAgent,
} from '@svc/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, watchErrors } from '../../test/browser.js';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { gatewayCookie, openTerminal } from '../../test/gateway-terminal.js';
import { createIncusProject, incusContext } from '../../test/incus.js';
import { incusExec } from '../../test/incus-exec.js';
import type { TestContext } from '../../test/test-context.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

/** One idle-stop minute lasts this long here (`AGENT_IDLE_UNIT_MS`). */
const UNIT_MS = 1_000;
/** The Agent's `idleStopMinutes`: long enough for Incus to start it, short enough to wait out. */
const IDLE_MINUTES = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// An Agent on Incus that nobody uses stops; an open terminal through the edge or an SSH session
// into the machine (reported by its gateway) keeps it running; a visit in Chromium from the
// browser that opened it before wakes it and lands in it.

describe('idle stop and wake on visit of an Agent on Incus', { timeout: 300_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let server: EdgeServer<TestContext>;
  let browser: Browser;
  let agent: Agent;

  const get = async () =>
    (await server.t.client.call(getAgent, { params: { id: agent.id } })).body as Agent;
  const reach = (state: MachineState) =>
    waitFor(async () => (await get()).status === state, 120_000, `Agent ${state}`);
  /** The sweep, as the job runs it every minute; asked here at the moments the test chooses. */
  const sweep = () => server.t.ctx.agents.stopIdle();

  beforeAll(async () => {
    project = await createIncusProject();
    // On every address, so the Agent's gateway reaches the service at the host's bridge address.
    server = await startEdgeServer({
      dashboard: true,
      host: '0.0.0.0',
      context: (env) => incusContext(project.name)({ ...env, AGENT_IDLE_UNIT_MS: String(UNIT_MS) }),
    });
    await signUpUser(server.t.client);
    const created = await server.t.client.call(createAgent, {
      body: {
        name: 'incus idle',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        idleStopMinutes: IDLE_MINUTES,
      },
    });
    agent = created.body;
    await reach('running');
    agent = await get();
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await project?.remove();
  });

  it('keeps running while a terminal is open through the edge, and stops once nobody uses it', async () => {
    const link = (await server.t.client.call(openAgentGateway, { params: { id: agent.id } })).body
      .url;
    const shell = await openTerminal(agent.url, await gatewayCookie(agent.url, link));
    try {
      // Twice the idle time with nothing typed: the open socket alone is a person there.
      await sleep(2 * IDLE_MINUTES * UNIT_MS);
      await sweep();
      expect((await get()).status).toBe('running');
      expect((await shell.run('echo still here')).output).toBe('still here\n');
    } finally {
      shell.close();
    }
    await sleep(IDLE_MINUTES * UNIT_MS + 1_000);
    await sweep();
    await reach('stopped');
    expect((await get()).stoppedReason).toBe('idle');
  });

  it('keeps running while an SSH session into the machine is open, which its gateway reports', async () => {
    // Started again (as a person would), with a key for the Agent's user.
    if ((await get()).status === 'stopped') {
      await server.t.client.call(startAgent, { params: { id: agent.id } });
    }
    await reach('running');
    // The Agent's bridge address takes the gateway's port only (its isolation): the session is
    // opened from inside, by its own user, to its sshd, which is what the gateway counts.
    const instance = `svc-${agent.id}`;
    const keys = await incusExec(
      project.name,
      instance,
      `su agent -c "install -d -m 700 ~/.ssh && ssh-keygen -q -t ed25519 -N '' -f ~/.ssh/id_ed25519 && cat ~/.ssh/id_ed25519.pub >> ~/.ssh/authorized_keys"`,
    );
    expect(keys.code, keys.stderr).toBe(0);
    const seconds = Math.ceil((3 * IDLE_MINUTES * UNIT_MS) / 1_000);
    // A session that stays open for three idle times, then ends.
    const session = incusExec(
      project.name,
      instance,
      `su agent -c "ssh -o StrictHostKeyChecking=no -o BatchMode=yes agent@127.0.0.1 'sleep ${seconds}; echo done'"`,
      60_000,
    );
    await sleep(2 * IDLE_MINUTES * UNIT_MS);
    await sweep();
    expect((await get()).status).toBe('running');
    const ended = await session;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toBe('done\n');
    await sleep(IDLE_MINUTES * UNIT_MS + 1_000);
    await sweep();
    await reach('stopped');
  });

  it('wakes when the browser that opened it visits its URL, and lands in its editor', async () => {
    expect((await get()).status).toBe('stopped');
    // One browser (one cookie jar) throughout.
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    // The browser opened the Agent once while it ran (its cookie is from then); then nobody
    // used it, and it stopped.
    await server.t.client.call(startAgent, { params: { id: agent.id } });
    await reach('running');
    const { url } = (await server.t.client.call(openAgentGateway, { params: { id: agent.id } }))
      .body;
    await page.goto(url);
    await page.waitForURL((at) => at.pathname === '/_svc/');
    await page.close();
    await sleep(IDLE_MINUTES * UNIT_MS + 1_000);
    await sweep();
    await reach('stopped');

    const visit = await context.newPage();
    const visitErrors = watchErrors(visit);
    await visit.goto(agent.url);
    await visit.getByRole('heading', { name: 'Starting…' }).waitFor();
    await screenshot(visit, 'agent-waking-incus');
    await visit.getByRole('link', { name: 'Editor', exact: true }).waitFor({ timeout: 60_000 });
    expect(new URL(visit.url()).pathname).toBe('/_svc/');
    expect((await get()).status).toBe('running');
    // The waiting page's 503s are its only complaints (code-server, next, has 404s of its own).
    expect([...errors, ...visitErrors].filter((e) => !/status of 503/.test(e))).toEqual([]);
    await visit.getByRole('link', { name: 'Editor', exact: true }).click();
    await visit.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  });
});
