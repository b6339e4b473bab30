import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { createTestContext, type TestContext } from './test-context.js';

/** The built dashboard (`npm run build`); the browser tests serve it from here. */
export const DASHBOARD_DIST = path.join(import.meta.dirname, '../../web/dist');

export interface DashboardServer {
  readonly t: TestContext;
  /** `http://localhost:<port>`: the service's PUBLIC_URL, so CSRF checks see the page's origin. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * The real app on a loopback port (a browser needs one), on the test compute driver, serving the
 * built dashboard. The port is bound first so the context can be told its own public URL.
 */
export async function startDashboardServer(
  /** More environment, given the server's URL (e.g. stand-in providers that redirect to it). */
  envFor: (
    baseUrl: string,
  ) => Promise<Record<string, string>> | Record<string, string> = () => ({}),
): Promise<DashboardServer> {
  if (!existsSync(path.join(DASHBOARD_DIST, 'index.html'))) {
    throw new Error(`${DASHBOARD_DIST} has no build: run npm run build first`);
  }
  let app: Hono | undefined;
  const server = serve({
    fetch: (request) => (app ? app.fetch(request) : new Response('starting', { status: 503 })),
    port: 0,
    hostname: '127.0.0.1',
  });
  await new Promise<void>((resolve) => {
    if (server.listening) resolve();
    else server.once('listening', () => resolve());
  });
  // `localhost`, not an IP literal: Agents get subdomains of the public host.
  const baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const t = await createTestContext('pglite', {
    env: { PUBLIC_URL: baseUrl, DASHBOARD_DIR: DASHBOARD_DIST, ...(await envFor(baseUrl)) },
  });
  app = t.app as unknown as Hono;
  return {
    t,
    baseUrl,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await t.close();
    },
  };
}
