import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localRequest } from '../../test/localhost-http.js';
import { freePort } from '../../test/service-process.js';
import { TEST_ENV } from '../../test/test-context.js';
import { parentEnv } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const MAIN = path.join(import.meta.dirname, '../main.ts');

/** `npm start -- --role=edge`: the real service in its own process, serving Agents' hosts only. */
describe('a process started with --role=edge', () => {
  let child: ChildProcess;
  let dataDir: string;
  let base: string;
  let stdout = '';

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-edge-role-'));
    const port = await freePort();
    base = `http://localhost:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--role=edge'], {
      env: {
        ...parentEnv(),
        ...TEST_ENV,
        LOG_LEVEL: 'info',
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: base,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    await waitFor(() => stdout.includes('"msg":"listening"'), 60_000, 'listening');
  }, 70_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the edge, the health checks, and nothing of the API or the dashboard', async () => {
    expect(stdout).toContain('"role":"edge"');
    const unknown = await localRequest(`http://nobody-abc123.${new URL(base).host}/`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain('There is no Agent at this address.');

    expect((await localRequest(`${base}/healthz`)).status).toBe(200);
    expect(JSON.parse((await localRequest(`${base}/readyz`)).body)).toMatchObject({
      status: 'ready',
    });
    for (const route of ['/api/me', '/api/agents', '/dashboard/']) {
      const res = await localRequest(`${base}${route}`);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ error: 'not_found' });
    }
  });
});
