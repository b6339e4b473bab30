import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startHttpServer } from '../http/http-server.js';
import { createLogger } from '../logger.js';
import { createEdgeProxy, type EdgeProxy } from './edge-proxy.js';
import type { EdgeResolution, EdgeRoutes } from './edge-routes.js';
import { createGatewayConnector } from './gateway-connection.js';

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/**
 * The proxy alone, in front of a stand-in gateway (echoes what it was sent, streams on demand,
 * and a WebSocket echo), with routes the test decides.
 */
describe('the edge proxy', () => {
  let gateway: Server;
  let gatewayPort: number;
  let service: Server;
  let servicePort: number;
  let edge: EdgeProxy;
  let release: (() => void) | undefined;
  const forgotten: string[] = [];
  const table = new Map<string, EdgeResolution>();
  const routes = {
    resolve: async (subdomain: string) => table.get(subdomain) ?? { kind: 'unknown' },
    forget: (subdomain: string) => forgotten.push(subdomain),
    clear: () => {},
    stats: () => ({ cached: 0, hits: 0, misses: 0 }),
    lookups: 0,
  } as EdgeRoutes;

  /** One request to the service, as a browser at `<host>` would send it. */
  const send = (
    host: string,
    path: string,
    options: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: servicePort,
            path,
            method: options.method ?? 'GET',
            headers: { host, ...options.headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks).toString(),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(options.body);
      },
    );

  beforeAll(async () => {
    gateway = createServer((req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first ');
        release = () => res.end('last');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            headers: req.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      });
    });
    new WebSocketServer({ server: gateway }).on('connection', (ws, req) =>
      ws.on('message', (message) => ws.send(`echo ${req.url} ${message}`)),
    );
    gatewayPort = await listen(gateway);
    table.set('bot-a1b2c3', {
      kind: 'route',
      agentId: 'a',
      target: { host: '127.0.0.1', port: gatewayPort, machineId: 'a', tls: false },
    });
    table.set('off-a1b2c3', { kind: 'not_running', agentId: 'off', state: 'stopped' });
    // A port nothing listens on: bound, then released.
    const closed = createServer();
    const closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    table.set('gone-a1b2c3', {
      kind: 'route',
      agentId: 'b',
      target: { host: '127.0.0.1', port: closedPort, machineId: 'b', tls: false },
    });

    edge = createEdgeProxy({
      routes,
      gateways: createGatewayConnector(),
      agentOrigin: { domain: 'agents.test' },
      publicUrl: 'https://app.test',
      trust: { trustProxy: false, trustedProxyHops: 1 },
      log: createLogger({ logLevel: 'silent' }),
    });
    service = startHttpServer(
      { fetch: () => new Response('the app') },
      { port: 0, host: '127.0.0.1' },
      undefined,
      edge,
    );
    await new Promise((resolve) => service.once('listening', resolve));
    servicePort = (service.address() as AddressInfo).port;
  });
  afterAll(async () => {
    edge?.close();
    service?.closeAllConnections();
    gateway?.closeAllConnections();
    await Promise.all([service, gateway].map((s) => new Promise((r) => s?.close(r))));
  });

  it('forwards method, path, query, headers and body, with X-Forwarded-For, -Proto and -Host', async () => {
    const res = await send('bot-a1b2c3.agents.test', '/some/path?q=1&r=%20', {
      method: 'POST',
      headers: { 'x-custom': 'kept', 'content-type': 'text/plain', 'x-forwarded-for': '6.6.6.6' },
      body: 'hello gateway',
    });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.body);
    expect(seen).toMatchObject({
      method: 'POST',
      url: '/some/path?q=1&r=%20',
      body: 'hello gateway',
    });
    expect(seen.headers).toMatchObject({
      host: 'bot-a1b2c3.agents.test',
      'x-custom': 'kept',
      // Not behind a trusted proxy: what the client claimed is replaced, not appended to.
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'bot-a1b2c3.agents.test',
    });
  });

  it('streams the answer as it comes, without waiting for its end', async () => {
    const first = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: servicePort,
          path: '/stream',
          headers: { host: 'bot-a1b2c3.agents.test' },
        },
        (res) => {
          res.once('data', (chunk: Buffer) => {
            resolve(chunk.toString());
            release?.();
            res.resume();
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(first).toBe('first ');
  });

  it('passes WebSocket upgrades through both ways', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${servicePort}/_svc/terminal/ws?x=1`, {
      headers: { host: 'bot-a1b2c3.agents.test' },
    });
    const message = new Promise<string>((resolve) => ws.once('message', (m) => resolve(String(m))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send('ls');
    expect(await message).toBe('echo /_svc/terminal/ws?x=1 ls');
    ws.close();
  });

  it('answers its own pages when there is nothing to proxy to, and forgets a route that fails', async () => {
    const unknown = await send('nobody-a1b2c3.agents.test', '/');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain('href="https://app.test/dashboard/"');
    const stopped = await send('off-a1b2c3.agents.test', '/');
    expect(stopped.status).toBe(503);
    expect(stopped.body).toContain('It is stopped.');

    const gone = await send('gone-a1b2c3.agents.test', '/_svc/');
    expect(gone.status).toBe(502);
    expect(gone.headers['content-type']).toMatch(/^text\/html/);
    expect(gone.body).toContain('This Agent is not reachable right now');
    expect(forgotten).toEqual(['gone-a1b2c3']);

    const ws = new WebSocket(`ws://127.0.0.1:${servicePort}/_svc/terminal/ws`, {
      headers: { host: 'gone-a1b2c3.agents.test' },
    });
    await expect(
      new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      }),
    ).rejects.toThrow(/502/);
    expect(forgotten).toEqual(['gone-a1b2c3', 'gone-a1b2c3']);
  });

  it("leaves every other host to the app, the dashboard's included", async () => {
    expect((await send('app.test', '/')).body).toBe('the app');
    expect((await send('a.bot-a1b2c3.agents.test', '/')).body).toBe('the app');
    expect((await send('agents.test', '/')).body).toBe('the app');
  });
});
