import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { deferredServing } from './deferred-serving.js';
import type { HostRoute } from './http-server.js';
import { Readiness } from './readiness.js';

const request = (path: string) => new Request(`http://localhost:8080${path}`);
const incoming = (host: string) => ({ headers: { host } }) as IncomingMessage;
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('deferredServing', () => {
  it('answers the health checks before the service exists and holds everything else for it', async () => {
    const serving = deferredServing(new Readiness(), (host) => host === 'agent.localhost:8080');
    expect(await (await serving.app.fetch(request('/healthz'), {})).json()).toEqual({
      status: 'ok',
    });
    const ready = await serving.app.fetch(request('/readyz'), {});
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { started: false } });

    let answered = false;
    const me = Promise.resolve(serving.app.fetch(request('/api/me'), {})).then((res) => {
      answered = true;
      return res;
    });
    // The edge's hosts are known from the configuration while the service is not there yet.
    expect(serving.front.claims(incoming('agent.localhost:8080'))).toBe(true);
    expect(serving.front.claims(incoming('localhost:8080'))).toBe(false);
    const edgeRequests: string[] = [];
    serving.front.request(incoming('agent.localhost:8080'), {} as ServerResponse);
    await tick();
    expect(answered).toBe(false);

    // The app first: from then on it answers everything, the health checks included.
    serving.serveApp({ fetch: (req) => new Response(new URL(req.url).pathname) });
    expect(await (await me).text()).toBe('/api/me');
    expect(await (await serving.app.fetch(request('/healthz'), {})).text()).toBe('/healthz');
    // The edge's requests wait for the edge (handed over once the service has started).
    await tick();
    expect(edgeRequests).toEqual([]);
    const front: HostRoute = {
      claims: () => true,
      request: (req) => void edgeRequests.push(String(req.headers.host)),
      upgrade: () => {},
    };
    serving.serveFront(front);
    await tick();
    expect(edgeRequests).toEqual(['agent.localhost:8080']);
    expect(serving.front.claims(incoming('localhost:8080'))).toBe(true);
  });

  it('ends the upgrades that wait when the start fails', async () => {
    const serving = deferredServing(new Readiness(), () => true);
    const socket = new PassThrough();
    serving.front.upgrade(incoming('agent.localhost:8080'), socket, Buffer.alloc(0));
    serving.cut();
    expect(socket.destroyed).toBe(true);
  });
});
