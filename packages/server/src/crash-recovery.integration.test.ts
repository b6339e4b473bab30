import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listAgents } from '@svc/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { crashScenario } from '../test/crash-scenario.js';
import { freePort, startService, stopLocalMachines, stopService } from '../test/service-process.js';
import { waitFor } from '../test/wait.js';

describe('a service killed mid-operation recovers', () => {
  let dataDir = '';
  const processes: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    await stopLocalMachines(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes stopping and destroying, times provisioning out, and leaves no machine without an Agent', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-crash-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      PROVISION_TIMEOUT_MS: '4000',
    };
    const scenario = crashScenario(base, 120_000);
    const { client } = scenario;

    const first = startService(env);
    processes.push(first);
    await scenario.ready();
    const agents = await scenario.prepare();
    await stopService(first, 'SIGTERM');
    const apiOnly = startService(env, ['--role=api']);
    processes.push(apiOnly);
    const inFlight = await scenario.leaveInFlight(apiOnly, agents);
    const { toStop } = inFlight;

    // A machine nobody owns, as a crash between the provider and our commit would leave.
    const orphan = randomUUID();
    await mkdir(path.join(dataDir, 'machines', orphan, 'home'), { recursive: true });
    await writeFile(
      path.join(dataDir, 'machines', orphan, 'machine.json'),
      JSON.stringify({
        id: orphan,
        status: 'off',
        labels: { managedBy: 'svc', kind: 'agent', agentId: orphan },
        env: {},
      }),
    );
    // Let the provisioning deadline pass while the service is down.
    await new Promise((resolve) => setTimeout(resolve, 4_500));

    const second = startService(env);
    processes.push(second);
    await scenario.expectRecovered(inFlight, 120_000);
    await waitFor(
      () => !existsSync(path.join(dataDir, 'machines', orphan)),
      60_000,
      'orphan removed',
    );

    const machines = await readdir(path.join(dataDir, 'machines'));
    const owned = (await client.call(listAgents)).body.map((a) => a.id);
    expect(machines.every((id) => owned.includes(id))).toBe(true);
    expect(machines).toEqual([toStop.id]);

    await stopService(second, 'SIGTERM');
  }, 300_000);
});
