import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { createApp } from '../packages/server/src/app.js';
import { loadConfig } from '../packages/server/src/config/config.js';
import { resolveSecrets } from '../packages/server/src/config/dev-keys.js';
import {
  type AppContext,
  createContext,
  startContext,
  stopContext,
} from '../packages/server/src/context.js';

export const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
export const CONNECTIONS = 16;

/** Requests per second and p99 latency of one URL, after a one-second warm-up. */
export async function measure(url: string, headers: Record<string, string> = {}) {
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 1 });
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/**
 * The whole service on loopback as an operator runs it (logs at warn only, keys given rather than
 * generated) but on the local compute driver, which production refuses, with throwaway data, on
 * PGlite or on PostgreSQL when `DATABASE_URL` is set. Runs `body`, then takes everything down.
 * `publicUrl` serves on a free port known beforehand, so that the service's own links (the fs
 * store's upload URLs) point at it.
 */
export async function withServedApp(
  options: { work: boolean; publicUrl?: boolean },
  body: (served: { ctx: AppContext; base: string }) => Promise<void>,
): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-'));
  const port = options.publicUrl ? await freePort() : 0;
  const { config, secrets: raw } = loadConfig({
    ...process.env,
    NODE_ENV: 'development',
    ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    HMAC_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...(port && { PUBLIC_URL: `http://127.0.0.1:${port}` }),
  });
  const ctx = await createContext(config, await resolveSecrets(config, raw, () => {}));
  await startContext(ctx, options);
  const server = serve({ fetch: createApp(ctx).fetch, port, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  try {
    await body({ ctx, base });
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await stopContext(ctx);
    await rm(dataDir, { recursive: true, force: true });
  }
}
