import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import pg from 'pg';
import { composeService } from '../packages/server/src/composition-root.js';
import { loadConfig } from '../packages/server/src/config/config.js';
import { resolveSecrets } from '../packages/server/src/config/dev-keys.js';
import type { AppContext } from '../packages/server/src/context.js';

export const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
export const CONNECTIONS = 16;

let statementCount = 0;
let counting = false;

/**
 * Counts every statement sent to either database from this process (ours and pg-boss's), by
 * wrapping the drivers' query methods once.
 */
function countStatements(): () => number {
  if (!counting) {
    counting = true;
    const wrap = (proto: object, method: string) => {
      const target = proto as Record<string, (...args: unknown[]) => unknown>;
      const original = target[method] as (...args: unknown[]) => unknown;
      target[method] = function (this: unknown, ...args: unknown[]) {
        statementCount += 1;
        return original.apply(this, args);
      };
    };
    wrap(pg.Client.prototype, 'query');
    wrap(PGlite.prototype, 'query');
    wrap(PGlite.prototype, 'exec');
  }
  return () => statementCount;
}

export interface Measured {
  readonly rps: number;
  readonly p99: number;
  /** Database statements per request during the measured run. */
  readonly statements: number;
}

/** Requests per second, p99 latency and statements per request of one URL, after a warm-up. */
export async function measure(
  url: string,
  headers: Record<string, string> = {},
): Promise<Measured> {
  const statements = countStatements();
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 1 });
  const before = statements();
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  const sent = statements() - before;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    statements: sent / Math.max(1, result.requests.total),
  };
}

/**
 * The floor of a route: a plain node:http server in the same process (no Hono, no schemas, no
 * serialization) whose every request awaits `query` (the endpoint's own statement, through the
 * same Kysely instance and driver) and answers a fixed small body.
 */
export async function withFloor(
  query: () => Promise<unknown>,
  body: (base: string) => Promise<void>,
): Promise<void> {
  const server = createHttpServer((_req, res) => {
    query().then(
      () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
        res.end('{"ok":true}');
      },
      (error: unknown) => {
        console.error(error);
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  try {
    await body(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/** Prints bare, floor and endpoint with the two ratios and the targets. */
export function report(
  database: string,
  endpoint: string,
  runs: { bare: Measured; floor: Measured; endpoint: Measured },
): void {
  const line = (name: string, m: Measured) =>
    `${name.padEnd(36)} ${m.rps.toFixed(0).padStart(7)} req/s   p99 ${String(m.p99).padStart(4)} ms   ${m.statements.toFixed(2)} statements/request`;
  const { bare, floor } = runs;
  const it = runs.endpoint;
  const toFloor = it.rps / floor.rps;
  console.log(`database: ${database}, ${CONNECTIONS} connections, ${DURATION_S} s each`);
  console.log(line('GET /healthz (bare route)', bare));
  console.log(line('floor (node:http + the same SQL)', floor));
  console.log(line(endpoint, it));
  console.log(
    `ratio endpoint : floor = ${toFloor.toFixed(3)} (target >= 0.800: ${toFloor >= 0.8 ? 'met' : 'missed'})`,
  );
  console.log(`ratio endpoint : bare  = ${(it.rps / bare.rps).toFixed(2)}`);
  if (database === 'postgres') {
    console.log(
      // The floor's p99 beside it: what the database and the machine allow at this load.
      `endpoint p99 = ${it.p99} ms, floor p99 = ${floor.p99} ms (target < 25 ms on PostgreSQL: ${it.p99 < 25 ? 'met' : 'missed'})`,
    );
  }
}

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
  const service = await composeService(config, await resolveSecrets(config, raw, () => {}), {
    work: options.work,
  });
  await service.start();
  const { ctx } = service;
  const server = serve({ fetch: service.app.fetch, port, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  try {
    await body({ ctx, base });
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
