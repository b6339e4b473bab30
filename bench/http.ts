import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { createApp } from '../packages/server/src/app.js';
import { loadConfig } from '../packages/server/src/config/config.js';
import { resolveSecrets } from '../packages/server/src/config/dev-keys.js';
import { createContext, startContext, stopContext } from '../packages/server/src/context.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 16;

async function measure(url: string, headers: Record<string, string> = {}): Promise<number> {
  // Warm-up, then the measured run.
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 1 });
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return result.requests.average;
}

/**
 * `GET /api/me` (cookie session, session and membership queries) against `GET /healthz` (no
 * database) in the same process, on PGlite (or PostgreSQL with DATABASE_URL). Target ratio ≥ 0.5.
 */
export async function run(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-'));
  const { config, secrets: raw } = loadConfig({
    ...process.env,
    // Production settings (no response validation, no request logging below warn), throwaway keys.
    NODE_ENV: 'production',
    ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    HMAC_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const ctx = await createContext(config, await resolveSecrets(config, raw, () => {}));
  await startContext(ctx, { work: true });
  const app = createApp(ctx);
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  try {
    const signUp = await fetch(`${base}/api/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `bench-${randomBytes(4).toString('hex')}@example.com`,
        password: 'benchmark password',
        name: 'Bench',
      }),
    });
    const cookie = signUp.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const bare = await measure(`${base}/healthz`);
    const me = await measure(`${base}/api/me`, { cookie });
    console.log(
      `database: ${config.database.kind}, ${CONNECTIONS} connections, ${DURATION_S} s each`,
    );
    console.log(`GET /healthz (bare route)        ${bare.toFixed(0).padStart(7)} req/s`);
    console.log(`GET /api/me  (session + database) ${me.toFixed(0).padStart(7)} req/s`);
    console.log(`ratio /api/me : /healthz = ${(me / bare).toFixed(2)} (target >= 0.50)`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await stopContext(ctx);
    await rm(dataDir, { recursive: true, force: true });
  }
}
