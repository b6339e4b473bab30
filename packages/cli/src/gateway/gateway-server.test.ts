import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gatewayKey, issueGatewayTicket } from '@svc/contract/gateway-ticket';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CodeServer, findCodeServer } from './code-server.js';
import { agentDashboardUrl } from './dashboard-link.js';
import { GatewayAuth } from './gateway-auth.js';
import { createGatewayServer } from './gateway-server.js';

const agentId = '0b9e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const mac = 'Z'.repeat(43);

/** Stands in for code-server: answers with what it was asked, and echoes WebSocket messages. */
const FAKE_CODE_SERVER = `#!/usr/bin/env node
const http = require('node:http');
const { WebSocketServer } = require(process.env.FAKE_WS_MODULE);
const socketPath = process.argv[process.argv.indexOf('--socket') + 1];
const auth = process.argv[process.argv.indexOf('--auth') + 1];
const server = http.createServer((req, res) =>
  res.end(req.url === '/args' ? process.argv.slice(2).join(' ') : 'code-server ' + req.url + ' auth=' + auth));
new WebSocketServer({ server }).on('connection', (ws, req) =>
  ws.on('message', (m) => ws.send('echo ' + req.url + ' ' + m)));
server.listen(socketPath);
`;

describe('svc gateway', () => {
  let root: string;
  let home: string;
  let base: string;
  let cookie: string;
  let gateway: ReturnType<typeof createGatewayServer>;
  let codeServer: CodeServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'svc-gw-'));
    home = path.join(root, 'home');
    await mkdir(path.join(home, '.crabglamp'), { recursive: true });
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      // The machine reaches the service at one address, browsers at another (`SVC_PUBLIC_URL`).
      `SVC_API_URL=http://127.0.0.1:9\nSVC_PUBLIC_URL=http://svc.localhost:8080/\nSVC_HMAC_TOKEN=svc1.${agentId}.1.${mac}\n`,
    );
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'code-server'), FAKE_CODE_SERVER);
    await chmod(path.join(bin, 'code-server'), 0o755);
    env = {
      HOME: home,
      PATH: `${bin}:${process.env.PATH}`,
      SHELL: '/bin/sh',
      FAKE_WS_MODULE: createRequire(import.meta.url).resolve('ws'),
    };
    const found = await findCodeServer(env);
    expect(found).toBe(path.join(bin, 'code-server'));
    codeServer = await CodeServer.start(found as string, home, env);
    gateway = createGatewayServer({
      home,
      env,
      auth: new GatewayAuth(env),
      assets: async () => new Map(),
      version: 'test',
      secureCookies: false,
      recheckMs: 100,
      dashboardUrl: () => agentDashboardUrl(env),
      agentName: async () => 'crab <one>',
      codeServer,
    });
    await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
    const { ticket } = issueGatewayTicket(gatewayKey(mac), {
      agentId,
      gen: 1,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    const opened = await fetch(`${base}/_svc/open?ticket=${ticket}`, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    cookie = (opened.headers.get('set-cookie') as string).split(';')[0] as string;
  });
  afterAll(async () => {
    await gateway?.close();
    gateway?.server.closeAllConnections();
    await rm(root, { recursive: true, force: true });
  });

  const get = (route: string, withCookie = true) =>
    fetch(`${base}${route}`, { headers: withCookie ? { cookie } : {}, redirect: 'manual' });
  /** A WebSocket and every message it gets, collected from the start (none can slip by). */
  const socket = (route: string, headers: Record<string, string>) =>
    new Promise<{ ws: WebSocket; messages: string[] }>((resolve, reject) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}${route}`, { headers });
      const messages: string[] = [];
      ws.on('message', (data) => messages.push(String(data)));
      ws.once('open', () => resolve({ ws, messages }));
      ws.once('error', reject);
    });

  it('answers health and version to anyone, 404 outside its prefix, 401 inside it without the cookie', async () => {
    expect(await (await get('/_svc/health', false)).json()).toEqual({ status: 'ok' });
    expect(await (await get('/_svc/version', false)).json()).toEqual({ version: 'test' });
    expect((await get('/index.html')).status).toBe(404);
    for (const route of ['/_svc/', '/_svc/terminal', '/_svc/editor/', '/_svc/api/tree?path=']) {
      expect((await get(route, false)).status).toBe(401);
    }
  });

  it("titles its pages with the Agent's name, escaped, and links back to its dashboard page", async () => {
    const res = await get('/_svc/terminal');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<title>Terminal · crab &lt;one&gt;</title>');
    expect(html).toContain('<strong>crab &lt;one&gt;</strong>');
    // Already open here: the link leads to the Agent's page, not to opening it again.
    expect(html).toContain(
      `<a href="http://svc.localhost:8080/dashboard/agents/${agentId}">Dashboard</a>`,
    );
    expect(await (await get('/_svc/')).text()).toContain('<title>Home · crab &lt;one&gt;</title>');
  });

  it('sends a browser without the cookie to the dashboard to open the Agent, and one with it to /_svc/', async () => {
    // No SVC_AGENT_ID in this home's agent.env: the id comes from the token.
    // On the public URL, where the user is signed in; never the machine's address of the service.
    const dashboard = `http://svc.localhost:8080/dashboard/agents/${agentId}?open=1`;
    const page = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    const visit = (route: string, headers: Record<string, string>) =>
      fetch(`${base}${route}`, { headers, redirect: 'manual' });
    expect((await visit('/', page)).headers.get('location')).toBe(dashboard);
    expect((await visit('/', {})).headers.get('location')).toBe(dashboard);
    const signedIn = await visit('/', { ...page, cookie });
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.get('location')).toBe('/_svc/');
    for (const route of ['/_svc/', '/_svc/terminal']) {
      const res = await visit(route, page);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(dashboard);
    }
    // Scripts and the file API keep their 401; the rest of the site is the user's.
    expect((await visit('/_svc/api/tree?path=', { accept: 'application/json' })).status).toBe(401);
    expect((await visit('/index.html', page)).status).toBe(404);
    expect((await fetch(`${base}/`, { method: 'POST', redirect: 'manual' })).status).toBe(404);
  });

  it('serves code-server under /_svc/editor/ with the prefix stripped, WebSockets included', async () => {
    expect((await get('/_svc/editor')).headers.get('location')).toBe('/_svc/editor/');
    expect(await (await get('/_svc/editor/static/app.js?v=1')).text()).toBe(
      'code-server /static/app.js?v=1 auth=none',
    );
    const { ws, messages } = await socket('/_svc/editor/session', { cookie, origin: base });
    ws.send('hi');
    await expect.poll(() => messages).toEqual(['echo /session hi']);
    ws.close();
    await expect(socket('/_svc/editor/session', { origin: base })).rejects.toThrow(/401/);
  });

  it("holds the editor's routes until code-server has started, so an Agent just booted opens VS Code", async () => {
    let started = () => {};
    const ready = new Promise<void>((resolve) => {
      started = resolve;
    });
    let late: CodeServer | undefined;
    const booting = createGatewayServer({
      home,
      env,
      auth: new GatewayAuth(env),
      assets: async () => new Map(),
      version: 'test',
      secureCookies: false,
      editorReady: () => ready,
      get codeServer() {
        return late;
      },
    });
    await new Promise<void>((resolve) => booting.server.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(booting.server.address() as AddressInfo).port}`;
    const answer = fetch(`${at}/_svc/editor`, { headers: { cookie }, redirect: 'manual' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    late = codeServer;
    started();
    expect((await answer).headers.get('location')).toBe('/_svc/editor/');
    late = undefined; // the suite's own gateway keeps running it
    await booting.close();
    booting.server.closeAllConnections();
  });

  it('runs code-server with telemetry and update checks off, on the home, with default settings', async () => {
    const args = (await (await get('/_svc/editor/args')).text()).split(' ');
    for (const flag of [
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
    ])
      expect(args).toContain(flag);
    expect(args.at(-1)).toBe(home);
    const settings = path.join(home, '.local/share/code-server/User/settings.json');
    expect(JSON.parse(await readFile(settings, 'utf8'))).toMatchObject({
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
    });
  });

  it('runs a real shell in the home over the terminal socket, only from its own origin', async () => {
    await expect(
      socket('/_svc/terminal/ws', { cookie, origin: 'http://evil.example' }),
    ).rejects.toThrow(/401/);
    const { ws, messages } = await socket('/_svc/terminal/ws?cols=80&rows=24', {
      cookie,
      origin: base,
    });
    await expect.poll(() => messages.length).toBeGreaterThan(0);
    // The first message names the shell's session; the shell's output follows.
    expect(JSON.parse(messages[0] as string).session).toMatch(/^[0-9a-f-]{36}$/);
    ws.send(JSON.stringify({ t: 'i', d: 'echo "at:$HOME"\r' }));
    await expect
      .poll(() => messages.slice(1).join(''), { timeout: 10_000 })
      .toContain(`at:${home}`);
    ws.close();
  });

  it("keeps code-server's port forwarding and cross-site writes out", async () => {
    expect((await get('/_svc/editor/proxy/3000/')).status).toBe(404);
    expect((await get('/_svc/editor/absproxy/3000/')).status).toBe(404);
    const post = (origin?: string) =>
      fetch(`${base}/_svc/editor/api`, {
        method: 'POST',
        headers: { cookie, ...(origin && { origin }) },
      });
    expect((await post('http://evil.example')).status).toBe(403);
    expect((await post()).status).toBe(403);
    expect((await post(base)).status).toBe(200);
  });

  it('survives malformed and abandoned upgrades', async () => {
    const { connect } = await import('node:net');
    const port = Number(new URL(base).port);
    await new Promise<void>((resolve) => {
      const raw = connect(port, '127.0.0.1', () => {
        raw.write(
          'GET //[ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
        );
        raw.resetAndDestroy();
        resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await (await get('/_svc/health', false)).json()).toEqual({ status: 'ok' });
  });

  it('writes files only for requests from its own pages', async () => {
    const put = (origin?: string) =>
      fetch(`${base}/_svc/api/file?path=note.txt`, {
        method: 'PUT',
        headers: { cookie, ...(origin && { origin }) },
        body: 'from the editor',
      });
    expect((await put()).status).toBe(403);
    const refused = await put('http://evil.example');
    expect(refused.status).toBe(403);
    // The service's envelope, with the reason in `detail`.
    expect(await refused.json()).toEqual({
      error: 'forbidden',
      detail: 'cross-origin request refused',
    });
    expect((await put(base)).status).toBe(200);
    expect(await readFile(path.join(home, 'note.txt'), 'utf8')).toBe('from the editor');
    const outside = await fetch(`${base}/_svc/api/file?path=${encodeURIComponent('../x')}`, {
      headers: { cookie },
    });
    expect(outside.status).toBe(403);
    expect(await outside.json()).toEqual({
      error: 'forbidden',
      detail: 'outside the home directory',
    });
  });

  it('creates, renames and deletes files for its own pages, inside the home only', async () => {
    const call = (method: string, query: string, origin: string | undefined = base) =>
      fetch(`${base}/_svc/api/${query}`, {
        method,
        headers: { cookie, ...(origin && { origin }) },
      });
    const created = await call('POST', 'file?path=made.md');
    expect(created.status).toBe(201);
    expect(await readFile(path.join(home, 'made.md'), 'utf8')).toBe('');
    const again = await call('POST', 'file?path=made.md');
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      error: 'invalid_state',
      detail: 'something of that name is already there',
    });
    expect((await call('POST', 'rename?path=made.md&to=renamed.md')).status).toBe(200);
    expect(await readFile(path.join(home, 'renamed.md'), 'utf8')).toBe('');
    // From another site, or with no origin: nothing happens.
    for (const origin of ['http://evil.example', undefined]) {
      expect((await call('DELETE', 'file?path=renamed.md', origin ?? '')).status).toBe(403);
      expect((await call('POST', 'rename?path=renamed.md&to=x.md', origin ?? '')).status).toBe(403);
      expect((await call('POST', 'file?path=y.md', origin ?? '')).status).toBe(403);
    }
    expect(await readFile(path.join(home, 'renamed.md'), 'utf8')).toBe('');
    expect((await call('DELETE', 'file?path=renamed.md')).status).toBe(200);
    await expect(readFile(path.join(home, 'renamed.md'))).rejects.toThrow();
    await writeFile(path.join(root, 'outside.txt'), 'not theirs');
    for (const [method, query] of [
      ['POST', `file?path=${encodeURIComponent('../made.txt')}`],
      ['DELETE', `file?path=${encodeURIComponent('../outside.txt')}`],
      ['POST', `rename?path=${encodeURIComponent('../outside.txt')}&to=in.txt`],
      ['POST', `rename?path=note.txt&to=${encodeURIComponent('../../note.txt')}`],
    ] as const) {
      const res = await call(method, query);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        error: 'forbidden',
        detail: 'outside the home directory',
      });
    }
    expect(await readFile(path.join(root, 'outside.txt'), 'utf8')).toBe('not theirs');
    await expect(readFile(path.join(root, 'made.txt'))).rejects.toThrow();
  });

  it('ends open sockets and refuses the cookie once the token changes (transfer, regenerate)', async () => {
    const { ws } = await socket('/_svc/terminal/ws', { cookie, origin: base });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      `SVC_API_URL=http://127.0.0.1:9\nSVC_HMAC_TOKEN=svc1.${agentId}.2.${'Y'.repeat(43)}\n`,
    );
    expect(await closed).toBe(4003);
    expect((await get('/_svc/')).status).toBe(401);
  });

  it('hands a request with x-svc-port to that port, without the service’s cookies, and never to its own', async () => {
    const { createServer } = await import('node:http');
    // Bound to ::1 alone, as some dev servers bind `localhost`: reached all the same.
    const app = createServer((req, res) => res.end(`app ${req.url} cookie=${req.headers.cookie}`));
    await new Promise<void>((resolve) => app.listen(0, '::1', resolve));
    const appPort = (app.address() as AddressInfo).port;
    try {
      const res = await fetch(`${base}/anything?x=1`, {
        headers: {
          'x-svc-port': String(appPort),
          cookie: `${cookie}; mine=1; svc_port=pc1.x`,
        },
      });
      expect(await res.text()).toBe('app /anything?x=1 cookie=mine=1');
      const own = new URL(base).port;
      for (const port of [own, '80', '65536', 'x']) {
        const refused = await fetch(`${base}/_svc/health`, { headers: { 'x-svc-port': port } });
        expect(refused.status, port).toBe(404);
      }
      const listed = (await (await get('/_svc/ports', false)).json()) as { ports: number[] };
      expect(listed.ports).toContain(appPort);
      expect(listed.ports).not.toContain(Number(own));
    } finally {
      app.close();
    }
  });
});
