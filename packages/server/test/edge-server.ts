import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEdgePorts } from '../src/edge/edge-ports.js';
import { createEdgeProxy, type EdgeProxy } from '../src/edge/edge-proxy.js';
import { startHttpServer } from '../src/http/http-server.js';
import { createLogger } from '../src/logger.js';
import { DASHBOARD_DIST } from './dashboard-server.js';
import { createLocalTestContext, type TestContext } from './test-context.js';

type LocalTestContext = Awaited<ReturnType<typeof createLocalTestContext>>;

export interface EdgeServer<T extends TestContext = LocalTestContext> {
  readonly t: T;
  /** `http://localhost:<port>`: the dashboard's URL; Agents are `http://<sub>.localhost:<port>/`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * The service as `npm start` serves it (the app and the edge on one port, `startHttpServer`) on
 * the real local compute driver. The port is bound first, so the context's PUBLIC_URL, and with
 * it the Agents' URLs, name it.
 */
export async function startEdgeServer<T extends TestContext = LocalTestContext>(
  options: {
    dashboard?: boolean;
    /** Where to listen (default loopback; `0.0.0.0` lets machines on a bridge reach it). */
    host?: string;
    /** The context, given the environment naming the server's URL (default: local driver). */
    context?: (env: Record<string, string>) => Promise<T>;
  } = {},
): Promise<EdgeServer<T>> {
  let app: { fetch: (request: Request, env: unknown) => Response | Promise<Response> } | undefined;
  let edge: EdgeProxy | undefined;
  const server: Server = startHttpServer(
    {
      fetch: (request, env) =>
        app ? app.fetch(request, env) : new Response('starting', { status: 503 }),
    },
    { port: 0, host: options.host ?? '127.0.0.1' },
    undefined,
    {
      claims: (req) => edge?.claims(req) ?? false,
      request: (req, res) => edge?.request(req, res),
      upgrade: (req, socket, head) => edge?.upgrade(req, socket, head),
    },
  );
  await new Promise<void>((resolve) => {
    if (server.listening) resolve();
    else server.once('listening', () => resolve());
  });
  const baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const env = { PUBLIC_URL: baseUrl, ...(options.dashboard && { DASHBOARD_DIR: DASHBOARD_DIST }) };
  const t = (await (options.context?.(env) ?? createLocalTestContext({ env }))) as T;
  app = t.app as typeof app;
  const { config } = t.ctx;
  edge = createEdgeProxy({
    routes: t.ctx.edgeRoutes,
    gateways: t.ctx.gateways,
    agentOrigin: config.http.agentOrigin,
    publicUrl: config.http.publicUrl,
    trust: config.http,
    activity: t.ctx.agentActivity,
    ports: createEdgePorts({
      database: t.ctx.database,
      clock: t.ctx.clock,
      hmacKey: t.ctx.secrets.hmacKey,
      publicUrl: config.http.publicUrl,
      agentOrigin: config.http.agentOrigin,
      log: createLogger({ logLevel: 'silent' }),
    }),
    wake: (agentId, proof) => t.ctx.agents.wake(agentId, proof),
    log: createLogger({ logLevel: 'silent' }),
  });
  return {
    t,
    baseUrl,
    close: async () => {
      edge?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await t.close();
    },
  };
}
