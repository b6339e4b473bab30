import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  runServiceUntil,
  serviceClient,
  startService,
  stopService,
} from '../test/service-process.js';

// Long enough that a loaded host's delays in reading the signal do not eat the whole drain.
const DRAIN_SECONDS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sign-in whose body arrives in two halves `gapMs` apart: a request in flight that long. */
function slowSignIn(port: number, base: string, gapMs: number) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'not the password 1' });
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/auth/sign-in',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          origin: base,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(() => req.end(body.slice(10)), gapMs);
  });
}

/** One answer on a new connection, or the connection's error code. */
const fresh = (port: number, pathname: string) =>
  new Promise<{ status: number; body: string } | { error: string }>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? 'error' }));
    req.end();
  });

const statusOf = (answer: Awaited<ReturnType<typeof fresh>>) =>
  'status' in answer ? answer.status : answer.error;

// The real service in its own process, stopped with SIGTERM as a rolling restart does: /readyz
// turns not ready at once while requests are still served for SHUTDOWN_DRAIN_SECONDS, then the
// listener closes, a request under way is answered in full, and the process exits cleanly.

describe('a graceful stop (SIGTERM)', () => {
  let child: ChildProcess;
  let dataDir: string;
  let port: number;
  let base: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-shutdown-'));
    port = await freePort();
    base = `http://localhost:${port}`;
    child = startService({
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
      SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS),
      SHUTDOWN_GRACE_SECONDS: '10',
    });
    await serviceClient(`http://127.0.0.1:${port}`).ready();
  }, 120_000);

  afterAll(async () => {
    if (child) await stopService(child, 'SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('turns not ready first, serves while the load balancer drains, finishes what is under way, and exits 0', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Under way across the whole drain: its body's second half comes after the listener closed.
    const inFlight = slowSignIn(port, base, (DRAIN_SECONDS + 1.5) * 1_000);
    await sleep(300);
    child.kill('SIGTERM');
    const termAt = Date.now();

    // Not ready as soon as the process has read its signal (on a loaded host that takes a while).
    const readyz = () => fresh(port, '/readyz');
    await expect
      .poll(async () => statusOf(await readyz()), {
        timeout: (DRAIN_SECONDS * 1_000) / 2,
        interval: 50,
      })
      .toBe(503);
    const ready = await readyz();
    expect(JSON.parse((ready as { body: string }).body)).toMatchObject({
      status: 'not_ready',
      checks: { stopping: true, database: true },
    });
    // Still serving during the drain: a request the load balancer sent before it noticed.
    expect(await fresh(port, '/healthz')).toMatchObject({ status: 200 });
    expect(Date.now() - termAt).toBeLessThan(DRAIN_SECONDS * 1_000);

    // Past the drain: nothing new is accepted.
    await expect
      .poll(() => fresh(port, '/healthz'), {
        timeout: DRAIN_SECONDS * 1_000 + 3_000,
        interval: 100,
      })
      .toEqual({ error: 'ECONNREFUSED' });
    expect(Date.now() - termAt).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1_000);
    // The request that was under way gets its whole answer.
    const answered = await inFlight;
    expect(answered.status, answered.body).toBe(401);
    expect(JSON.parse(answered.body)).toMatchObject({ error: 'invalid_credentials' });
    expect(await exited).toBe(0);
  }, 60_000);
});

describe('a signal while the service starts', () => {
  let dataDir: string;
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  // SIGTERM as soon as it listens, with its migrations and first reconciles still to come (and
  // /readyz says ready before the last of its start-up work): it finishes starting, then stops
  // as usual, instead of meeting the default action and dropping every connection.
  it('stops once started, and exits 0', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-early-signal-'));
    const run = await runServiceUntil({ DATA_DIR: dataDir }, 'listening');
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const said = run.stdout.split('\n').map((line) => /"msg":"([^"]*)"/.exec(line)?.[1]);
    expect(said).toContain('signal while starting: stopping once started');
    expect(said.indexOf('started')).toBeLessThan(said.indexOf('stopped'));
  }, 120_000);
});
