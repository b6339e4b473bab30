import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { CreateServerSpec } from '../packages/server/src/adapters/compute/compute-driver.js';
import { IncusClient } from '../packages/server/src/adapters/compute/incus/incus-client.js';
import { IncusComputeDriver } from '../packages/server/src/adapters/compute/incus/incus-compute-driver.js';
import { buildUserData } from '../packages/server/src/plain-vms/cloud-init.js';
import {
  createIncusProject,
  INCUS_SOCKET,
  incusDriverOptions,
} from '../packages/server/test/incus.js';
import { localRequest } from '../packages/server/test/localhost-http.js';
import { keyPair, ssh } from '../packages/server/test/openssh.js';
import { waitFor } from '../packages/server/test/wait.js';

// `npm run bench -- machines` (root, after `npm run incus:setup`): real machines on the incus
// driver, one at a time so each number is a latency. Create-to-SSH-ready (Plain VMs) and
// create-to-gateway-ready (Agents), p50 and p95 over BENCH_MACHINES (10) of each, and a clone of
// an Agent with a 200 MB home; each against the floor measured in the same run: Incus's own create
// and start of the same image, and its own copy of the same instance.

const MACHINES = Number(process.env.BENCH_MACHINES ?? 10);
const CLONE_HOME_MB = Number(process.env.BENCH_CLONE_MB ?? 200);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const timed = async (task: () => Promise<unknown>) => {
  const started = performance.now();
  await task();
  return performance.now() - started;
};

export async function run(): Promise<void> {
  const project = await createIncusProject();
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-bench-machines-'));
  const key = await keyPair(dir, 'bench');
  const client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
  const driver = new IncusComputeDriver(
    incusDriverOptions(project.name),
    pino({ level: 'silent' }),
  );
  await driver.connect();
  const spec = (kind: 'agent' | 'plain_vm'): CreateServerSpec => {
    const id = randomUUID();
    const base = { id, size: 'small', region: 'eu', labels: { managedBy: 'bench', kind } } as const;
    if (kind === 'agent') return { ...base, bootstrapEnv: benchAgentEnv(id) };
    const login = { user: 'debian', authorizedKeys: [key.publicLine] };
    const userData = buildUserData({
      hostname: 'bench',
      defaultUser: 'debian',
      authorizedKeys: login.authorizedKeys,
    });
    return { ...base, image: 'debian-12', bootstrapEnv: {}, login, userData };
  };

  /**
   * Incus alone: create and start an instance of the image, or a copy (no firewall, no wait; its
   * NIC on the bridge without the source's pinned address, which a running copy could not take).
   */
  const floor = async (source: object) => {
    const name = `bench-${randomBytes(4).toString('hex')}`;
    const devices = { eth0: { type: 'nic', network: 'incusbr0', name: 'eth0' } };
    const ms = await timed(async () => {
      await client.call('POST', '/1.0/instances', {
        body: { name, type: 'container', source, devices },
      });
      await client.call('PUT', `/1.0/instances/${name}/state`, { body: { action: 'start' } });
    });
    await client.call('PUT', `/1.0/instances/${name}/state`, {
      body: { action: 'stop', force: true },
    });
    await client.call('DELETE', `/1.0/instances/${name}`);
    return ms;
  };

  try {
    const report = async (what: string, image: string, ready: (id: string) => Promise<void>) => {
      const ours: number[] = [];
      const floors: number[] = [];
      for (let i = 0; i < MACHINES; i++) {
        floors.push(await floor({ type: 'image', alias: image }));
        const machine = spec(image === 'debian-12' ? 'plain_vm' : 'agent');
        ours.push(
          await timed(async () => {
            await driver.createServer(machine);
            await ready(machine.id);
          }),
        );
        await driver.deleteServer(machine.id);
      }
      const [p50, p95, f50] = [percentile(ours, 50), percentile(ours, 95), percentile(floors, 50)];
      console.log(
        `${what}: p50 ${seconds(p50)}, p95 ${seconds(p95)} over ${MACHINES}; ` +
          `Incus create+start p50 ${seconds(f50)}; ratio ${(p50 / f50).toFixed(2)}×`,
      );
    };

    await report('create → SSH ready (Plain VM, debian-12)', 'debian-12', async (id) => {
      const host = (await driver.getServer(id))?.ssh?.host as string;
      await waitFor(
        async () => (await ssh(22, 'debian', key.file, 'true', host)).code === 0,
        120_000,
      );
    });
    await report('create → gateway ready (Agent)', 'svc-agent', async (id) => {
      const gateway = (await driver.getServer(id))?.gateway;
      const health = `http://${gateway?.host}:${gateway?.port}/_svc/health`;
      await waitFor(
        () =>
          localRequest(health).then(
            (res) => res.status === 200,
            () => false,
          ),
        120_000,
      );
    });

    // A clone of a running Agent whose home holds CLONE_HOME_MB of incompressible data.
    const source = spec('agent');
    await driver.createServer(source);
    // In 1 MB appends: Incus drops a single request that large.
    for (let mb = 0; mb < CLONE_HOME_MB; mb++) {
      await client.call('POST', `/1.0/instances/svc-${source.id}/files`, {
        query: { path: '/home/agent/blob' },
        raw: randomBytes(1024 * 1024),
        headers: {
          'Content-Type': 'application/octet-stream',
          'X-Incus-type': 'file',
          'X-Incus-write': mb === 0 ? 'overwrite' : 'append',
          'X-Incus-uid': '1000',
          'X-Incus-gid': '1000',
          'X-Incus-mode': '0600',
        },
      });
    }
    const copyFloor = await floor({
      type: 'copy',
      source: `svc-${source.id}`,
      instance_only: true,
    });
    const clone = { ...spec('agent'), sourceServerId: source.id };
    const cloneMs = await timed(() => driver.createServer(clone));
    console.log(
      `clone of an Agent with a ${CLONE_HOME_MB} MB home: ${seconds(cloneMs)}; ` +
        `Incus copy+start ${seconds(copyFloor)}; ratio ${(cloneMs / copyFloor).toFixed(2)}×`,
    );
    await driver.deleteServer(clone.id);
    await driver.deleteServer(source.id);
  } finally {
    await driver.close();
    client.close();
    await project.remove();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The environment an Agent gets; the bench's machines never call the service. */
const benchAgentEnv = (id: string) => ({
  SVC_API_URL: 'http://127.0.0.1:9/',
  SVC_AGENT_ID: id,
  SVC_HMAC_TOKEN: `svc1.${id}.1.${randomBytes(32).toString('base64url')}`,
  SVC_GATEWAY_SECURE_COOKIES: 'false',
});
