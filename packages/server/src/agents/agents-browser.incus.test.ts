import { request } from 'node:http';
import { type Agent, createAgent, getAgent, openAgentGateway } from '@svc/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, watchErrors } from '../../test/browser.js';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { createIncusProject, INCUS_SOCKET, incusContext } from '../../test/incus.js';
import { incusExec } from '../../test/incus-exec.js';
import { localRequest } from '../../test/localhost-http.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';

// An Agent on Incus opened in Chromium at its URL, which the service's edge proxies to the
// gateway on the machine's bridge address: the terminal runs `svc` by its bare name, and the
// editor, the image's code-server, saves into the machine's home (read back through the Incus
// file API).

describe('an Agent on Incus in Chromium, through the edge', { timeout: 240_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let incus: IncusClient;
  let server: EdgeServer<TestContext>;
  let browser: Browser;
  let agent: Agent;

  beforeAll(async () => {
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    // On every address, so `svc` in the Agent reaches the service at the host's bridge address.
    server = await startEdgeServer({
      dashboard: true,
      host: '0.0.0.0',
      context: incusContext(project.name),
    });
    const { client } = server.t;
    await signUpUser(client);
    const created = await client.call(createAgent, {
      body: { name: 'incus browser', size: 'small', region: 'eu', billingType: 'metered' },
    });
    agent = await waitFor(
      async () => {
        const current = (await client.call(getAgent, { params: { id: created.body.id } })).body;
        return ['running', 'error'].includes(current.status) && current;
      },
      120_000,
      'running',
    );
    expect(agent.status, `status reason: ${agent.statusReason}`).toBe('running');
    await waitFor(
      () =>
        localRequest(new URL('/_svc/health', agent.url).toString()).then(
          (res) => res.status === 200,
          () => false,
        ),
      60_000,
      'gateway through the edge',
    );
    await incus.pushFile(`svc-${agent.id}`, '/home/agent/hello.txt', 'hello from the machine\n', {
      uid: 1000,
      gid: 1000,
      mode: 0o644,
    });
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    incus?.close();
    await project?.remove();
  });

  it("sends a browser without the cookie from the Agent's URL to PUBLIC_URL's dashboard", async () => {
    // Through the edge, as a browser asks: the machine reaches the service at the host's bridge
    // address, but the browser must land on the dashboard's own origin, where it is signed in.
    // Asked again on a loaded host's hiccup (no answer in time, a bad gateway): a wrong answer
    // from a gateway that did answer fails at once.
    const visit = await waitFor(
      () =>
        localRequest(agent.url, { headers: { accept: 'text/html' } }).then(
          (answer) => (answer.status < 500 ? answer : undefined),
          () => undefined,
        ),
      120_000,
      "the Agent's URL answering",
    );
    expect(visit.status).toBe(302);
    expect(visit.headers.location).toBe(`${server.baseUrl}/dashboard/agents/${agent.id}?open=1`);
    // A browser signed out of the dashboard follows it there and is asked to sign in (its 401s
    // are the dashboard asking who is signed in).
    const page = await browser.newPage();
    await page.goto(agent.url);
    await expect.poll(() => new URL(page.url()).origin).toBe(server.baseUrl);
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/dashboard\//);
    await page.close();
  });

  it('runs svc in the terminal by its bare name', async () => {
    const { url } = (await server.t.client.call(openAgentGateway, { params: { id: agent.id } }))
      .body;
    // The Agent's URL is on the service's own port: the edge carries the page and its sockets.
    expect(new URL(url).host).toBe(`${agent.subdomain}.${new URL(server.baseUrl).host}`);
    const page = await browser.newPage();
    const errors = watchErrors(page);
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/_svc/');

    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
    const screen = page.locator('.xterm-rows');
    await screen.waitFor();
    await page.locator('.xterm').click();
    await page.keyboard.type('echo "at:$HOME as:$(whoami)"; svc --version && svc apps list');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => screen.innerText(), { timeout: 20_000 })
      .toContain('at:/home/agent as:agent');
    await expect.poll(() => screen.innerText(), { timeout: 20_000 }).toMatch(/\b0\.1\.0\b/);
    await expect
      .poll(() => screen.innerText(), { timeout: 20_000 })
      .toContain('No app connections');
    await screenshot(page, 'incus-gateway-terminal');
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it("runs the image's code-server 4.139.1 from the gateway, with telemetry and update checks off", async () => {
    const instance = `svc-${agent.id}`;
    const version = await incusExec(project.name, instance, 'code-server --version');
    expect(version.stdout).toMatch(/^4\.139\.1 /m);
    const running = await incusExec(project.name, instance, 'ps -u agent -o args=');
    const line = running.stdout.split('\n').find((args) => args.includes('code-server'));
    expect(line, running.stdout).toContain('--disable-telemetry');
    expect(line).toContain('--disable-update-check');
    expect(line).toContain('--auth none');
    // VS Code's search runs the ripgrep its package names: Debian's, linked in its place.
    const rg = await incusExec(
      project.name,
      instance,
      'cd /home/agent && touch found.txt && /opt/code-server/lib/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep-universal/bin/linux-x64/rg --files --hidden --no-require-git',
    );
    expect(rg.stdout.split('\n')).toContain('found.txt');
  });

  // VS Code in the browser, through the edge (its page and its WebSocket): a file opened from the
  // Explorer, edited, saved with Ctrl+S, and read back from the machine. Only the Agent's own origin is asked for anything: any other request is
  // refused and reported.
  for (const width of [1280, 390]) {
    it(`opens a file in code-server through the edge, edits and saves it, at ${width} px`, async () => {
      const file = `code-${width}.txt`;
      await incus.pushFile(`svc-${agent.id}`, `/home/agent/${file}`, 'first line\n', {
        uid: 1000,
        gid: 1000,
        mode: 0o644,
      });
      const { url } = (await server.t.client.call(openAgentGateway, { params: { id: agent.id } }))
        .body;
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const elsewhere: string[] = [];
      await context.route('**/*', (route) => {
        const { host } = new URL(route.request().url());
        if (host === new URL(agent.url).host) return route.continue();
        elsewhere.push(route.request().url());
        return route.abort();
      });
      const page = await context.newPage();
      const started = Date.now();
      await page.goto(url);
      await page.getByRole('link', { name: 'Editor', exact: true }).click();
      await page.waitForURL((at) => at.pathname.startsWith('/_svc/editor/'), {
        waitUntil: 'commit',
      });
      const workbench = page.locator('.monaco-workbench');
      await workbench.waitFor({ timeout: 90_000 });
      // The workbench is up once its connection to the machine is: the status bar names it.
      await page.locator('.statusbar').waitFor({ timeout: 60_000 });
      const opened = Date.now() - started;

      // The file from the Explorer, which lists the home (the workbench's first view).
      const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: file });
      await row.first().click({ timeout: 60_000 });
      await page.locator('.tab', { hasText: file }).waitFor({ timeout: 30_000 });
      const editor = page.locator('.part.editor .monaco-editor .view-lines').first();
      // Monaco draws spaces as no-break spaces.
      const text = async () => (await editor.innerText()).replaceAll('\u00a0', ' ');
      await expect.poll(text).toContain('first line');
      await editor.click();
      await page.keyboard.press('Control+End');
      await page.keyboard.type('saved from code-server');
      await page.keyboard.press('Control+S');
      await expect
        .poll(() => incusFile(`svc-${agent.id}`, `/home/agent/${file}`), { timeout: 20_000 })
        .toBe('first line\nsaved from code-server');
      await screenshot(page, `incus-code-server-${width}`);
      console.info(`code-server at ${width} px: workbench up ${opened} ms after the ticket's URL`);
      expect(elsewhere).toEqual([]);
      await context.close();
    });
  }

  /** A file of the machine, read through the Incus API (raw bytes, not the JSON envelope). */
  const incusFile = (instance: string, file: string) =>
    new Promise<string>((resolve, reject) => {
      const query = new URLSearchParams({ path: file, project: project.name });
      const req = request(
        { socketPath: INCUS_SOCKET, path: `/1.0/instances/${instance}/files?${query}` },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        },
      );
      req.on('error', reject);
      req.end();
    });
});
