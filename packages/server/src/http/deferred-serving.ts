import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HostRoute } from './http-server.js';

type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;

/** What the HTTP server serves once the service is built: the app and the edge in front of it. */
export interface Served {
  readonly app: { fetch: Fetch };
  readonly front: HostRoute;
}

/**
 * Lets the HTTP server listen before the service behind it is ready (the database opening, the
 * migrations and the job queue starting):
 * `/healthz` answers at once (the process is up), `/readyz` answers 503 `not_ready`, and every
 * other request, Agents' hosts and WebSocket upgrades included, waits until `serve` hands over the
 * app and the edge. Which hosts are the edge's is known from the configuration alone
 * (`isEdgeHost`), so a request is never sent to the wrong side while it waits.
 */
export function deferredServing(isEdgeHost: (host: string | undefined) => boolean) {
  let served: Served | undefined;
  let handOver: (value: Served) => void = () => {};
  const whenServed = new Promise<Served>((resolve) => {
    handOver = resolve;
  });
  const app = {
    async fetch(request: Request, env: unknown): Promise<Response> {
      if (served) return served.app.fetch(request, env);
      const { pathname } = new URL(request.url);
      if (pathname === '/healthz') return Response.json({ status: 'ok' });
      if (pathname === '/readyz') {
        const checks = { database: false, migrations: false, started: false };
        return Response.json({ status: 'not_ready', checks }, { status: 503 });
      }
      return (await whenServed).app.fetch(request, env);
    },
  };
  const front: HostRoute = {
    claims: (req) => (served ? served.front.claims(req) : isEdgeHost(req.headers.host)),
    request: (req: IncomingMessage, res: ServerResponse) =>
      void whenServed.then((s) => s.front.request(req, res)),
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      void whenServed.then((s) => s.front.upgrade(req, socket, head)),
  };
  return {
    app,
    front,
    serve(target: Served) {
      served = target;
      handOver(target);
    },
  };
}
