import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crashScenario } from '../test/crash-scenario.js';
import { createIncusProject, INCUS_SOCKET, nameOf } from '../test/incus.js';
import { freePort, startService, stopService } from '../test/service-process.js';
import { waitFor } from '../test/wait.js';
import { IncusClient } from './adapters/compute/incus/incus-client.js';

// The crash-recovery scenario of crash-recovery.integration.test.ts on real Incus machines: a
// service killed with SIGKILL mid-operation, and what a crash between Incus's work and the
// database's commit leaves (an instance, or only its firewall), all set right by the next start.

describe('a service on Incus killed mid-operation recovers', () => {
  let dataDir = '';
  let project: Awaited<ReturnType<typeof createIncusProject>> | undefined;
  const processes: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    await project?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes stopping and destroying, times provisioning out, and leaves no instance or ACL without an Agent', async () => {
    project = await createIncusProject();
    const incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-crash-incus-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = (provisionTimeoutMs: number) => ({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      COMPUTE_DRIVER: 'incus',
      INCUS_SOCKET,
      INCUS_PROJECT: project?.name as string,
      INCUS_SIZE_FACTOR: '0.25',
      PROVISION_TIMEOUT_MS: String(provisionTimeoutMs),
    });
    const scenario = crashScenario(base, 150_000);

    const first = startService(env(180_000));
    processes.push(first);
    await scenario.ready();
    const agents = await scenario.prepare();
    await stopService(first, 'SIGTERM');
    const apiOnly = startService(env(4_000), ['--role=api']);
    processes.push(apiOnly);
    const inFlight = await scenario.leaveInFlight(apiOnly, agents);
    const { toStop } = inFlight;

    // What a crash between Incus and our commit leaves: an instance nothing owns, and the
    // firewall of a machine whose instance was never made.
    const orphan = randomUUID();
    const aclOnly = randomUUID();
    const owner = (id: string) => ({
      'user.svc.machine-id': id,
      'user.svc.kind': 'agent',
      'user.svc.project': project?.name as string,
      'user.svc.label.managedBy': 'svc',
      'user.svc.label.kind': 'agent',
    });
    await incus.call('POST', '/1.0/instances', {
      body: {
        name: `svc-${orphan}`,
        type: 'container',
        source: { type: 'image', alias: 'debian-12' },
        config: owner(orphan),
      },
    });
    await incus.call('POST', '/1.0/network-acls', {
      body: { name: `svc-${aclOnly}`, config: owner(aclOnly), ingress: [], egress: [] },
    });
    await new Promise((resolve) => setTimeout(resolve, 4_500));

    const second = startService(env(4_000));
    processes.push(second);
    await scenario.expectRecovered(inFlight, 90_000);

    const instances = async () => (await incus.call<string[]>('GET', '/1.0/instances')).map(nameOf);
    const acls = async () =>
      (
        await incus.call<{ name: string; config: Record<string, string> }[]>(
          'GET',
          '/1.0/network-acls',
          { query: { recursion: '1' } },
        )
      )
        .filter((acl) => acl.config['user.svc.project'] === project?.name)
        .map((acl) => acl.name);
    const onlyStopped = [`svc-${toStop.id}`];
    await waitFor(
      async () => JSON.stringify(await instances()) === JSON.stringify(onlyStopped),
      60_000,
      'only the stopped Agent has an instance',
    );
    await waitFor(
      async () => JSON.stringify(await acls()) === JSON.stringify(onlyStopped),
      60_000,
      'only the stopped Agent has an ACL',
    );
    const stopped = await incus.call<{ status: string }>('GET', `/1.0/instances/svc-${toStop.id}`);
    expect(stopped.status).toBe('Stopped');
    incus.close();
    await stopService(second, 'SIGTERM');
  }, 420_000);
});
