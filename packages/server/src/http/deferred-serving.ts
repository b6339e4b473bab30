import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HostRoute } from './http-server.js';
import type { Readiness } from './readiness.js';

type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;

/** A value handed over later: `value` once it is there, `promise` for those who wait. */
function handOver<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  const slot: { value?: T; promise: Promise<T>; give(value: T): void } = {
    promise,
    give(value) {
      slot.value = value;
      resolve(value);
    },
  };
  return slot;
}

/**
 * Lets the HTTP server listen before the service behind it exists (its modules loading, the
 * database opening): `/healthz` answers at once (the process is up), `/readyz` answers what
 * `readiness` reports with nothing open yet (503 `not_ready`), and every other request waits
 * until `serveApp` hands over the app, which then answers everything (and holds, itself, what
 * must wait for the rest of the start, reading the same `readiness`). Agents' hosts
 * and WebSocket upgrades wait until `serveFront` hands over the edge, once the service has started:
 * its routes read the migrated database. Which hosts are the edge's is known from the
 * configuration alone (`isEdgeHost`), so a request is never sent to the wrong side while it waits.
 * A start that fails hands nothing over: the server's connections are cut instead.
 */
export function deferredServing(
  readiness: Readiness,
  isEdgeHost: (host: string | undefined) => boolean,
) {
  const app = handOver<{ fetch: Fetch }>();
  const front = handOver<HostRoute>();
  const waitingSockets = new Set<Duplex>();
  return {
    app: {
      fetch(request: Request, env: unknown): Response | Promise<Response> {
        if (app.value) return app.value.fetch(request, env);
        const { pathname } = new URL(request.url);
        if (pathname === '/healthz') return Response.json({ status: 'ok' });
        if (pathname === '/readyz') {
          return readiness
            .report()
            .then(({ ready, body }) => Response.json(body, { status: ready ? 200 : 503 }));
        }
        return app.promise.then((served) => served.fetch(request, env));
      },
    },
    front: {
      claims: (req: IncomingMessage) =>
        front.value ? front.value.claims(req) : isEdgeHost(req.headers.host),
      request(req: IncomingMessage, res: ServerResponse) {
        if (front.value) front.value.request(req, res);
        else void front.promise.then((served) => served.request(req, res));
      },
      upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
        if (front.value) return front.value.upgrade(req, socket, head);
        // The HTTP server lets go of an upgraded socket: `cut` ends it if the start fails.
        waitingSockets.add(socket);
        socket.once('close', () => waitingSockets.delete(socket));
        void front.promise.then((served) => {
          waitingSockets.delete(socket);
          served.upgrade(req, socket, head);
        });
      },
    } satisfies HostRoute,
    serveApp: (target: { fetch: Fetch }) => app.give(target),
    serveFront: (target: HostRoute) => front.give(target),
    /** Ends the upgrades still waiting (a start that failed; the server cuts its own connections). */
    cut() {
      for (const socket of waitingSockets) socket.destroy();
    },
  };
}
