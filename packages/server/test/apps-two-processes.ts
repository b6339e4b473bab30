import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  authorizeApp,
  ConnectionToken,
  getConnectionToken,
  listAppConnections,
  signUp,
} from '@svc/contract';
import pg from 'pg';
import { freePort } from './service-process.js';
import { consentAtStandIn } from './stand-in-consent.js';
import { startStandIn } from './stand-in-provider.js';
import { TestClient } from './test-client.js';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';
import { waitFor } from './wait.js';

const MAIN = path.join(import.meta.dirname, '../src/main.ts');
const PUBLIC_URL = 'http://localhost:8080';

/**
 * Two real service processes (`main.ts`) on one fresh PostgreSQL database of `serverUrl`'s
 * server, sharing a rotating Spotify-like stand-in (its access tokens living
 * `accessTokenTtlSeconds`, an hour by default): a user connects through the first, then
 * `requests` concurrent token requests on the stale connection are split between both.
 * Returns what the stand-in and the callers saw; the database is dropped afterwards.
 */
export async function refreshAcrossProcesses(
  serverUrl: string,
  requests = 50,
  options: { accessTokenTtlSeconds?: number } = {},
) {
  const database = `svc_apps_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const music = await startStandIn('music', {
    redirectUri: `${PUBLIC_URL}/api/apps/callback`,
    ...(options.accessTokenTtlSeconds && { accessTokenTtlSeconds: options.accessTokenTtlSeconds }),
  });
  // Stale (less than half the lifetime, and less than 5 minutes, left) but not expired.
  const leftSeconds = Math.min(60, (options.accessTokenTtlSeconds ?? 3600) / 3);
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const start = async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-apps-proc-'));
    dirs.push(dataDir);
    const env = {
      ...TEST_ENV,
      ...music.env(),
      LOG_LEVEL: 'warn',
      DATABASE_URL: url.toString(),
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--role=api'], {
      env: { ...parentEnv(), ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      () =>
        fetch(`${base}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      30_000,
      'ready',
    );
    const http = {
      request: (p: string, init?: RequestInit) =>
        fetch(`${base}${p}`, { ...init, redirect: 'manual' }),
    };
    return new TestClient(http as never, PUBLIC_URL);
  };
  try {
    // One after the other: the first applies the migrations.
    const first = await start();
    const second = await start();
    await first.call(signUp, {
      body: { email: 'two@example.com', password: 'two processes pw', name: 'Two' },
    });
    for (const [name, value] of first.cookies) second.cookies.set(name, value);
    const authorize = await first.call(authorizeApp, { query: { provider: 'music' } });
    const callback = await consentAtStandIn(authorize.headers.get('location') as string, 'two');
    // A raw path: the callback's query is the provider's (code, state), which no descriptor names.
    await first.get(`${callback.pathname}${callback.search}`);
    const [connection] = (await second.call(listAppConnections)).body;
    if (!connection) throw new Error('no connection listed after the callback');
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    await db.query(
      'update app_connections set access_token_expires_at = now() + make_interval(secs => $1)',
      [leftSeconds],
    );
    await db.end();
    const before = music.counts.token;
    music.faults = { delayMs: 300 };
    const responses = await Promise.all(
      Array.from({ length: requests }, (_, i) =>
        (i % 2 ? second : first).send(getConnectionToken, { params: { id: connection.id } }),
      ),
    );
    return {
      statuses: responses.map((r) => r.status),
      tokens: new Set(responses.map((r) => ConnectionToken.safeParse(r.body).data?.accessToken)),
      providerCalls: music.counts.token - before,
    };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await music.close();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}
