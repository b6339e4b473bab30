import { randomUUID } from 'node:crypto';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../../../test/incus.js';
import { incusExec } from '../../../../test/incus-exec.js';
import { waitFor } from '../../../../test/wait.js';
import { CLI_BUILD_KEY } from './incus-agent.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';
import type { Instance } from './incus-instance.js';
import { instanceLimits } from './incus-instance-spec.js';

describe('snapshots of a machine on Incus', { timeout: 240_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let driver: IncusComputeDriver;
  let client: IncusClient;
  const id = randomUUID();
  const name = `svc-${id}`;
  const sizeFactor = 1 / 80;

  beforeAll(async () => {
    project = await createIncusProject();
    client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    driver = new IncusComputeDriver(
      incusDriverOptions(project.name, { sizeFactor }),
      pino({ level: 'silent' }),
    );
    await driver.connect();
  }, 60_000);

  afterAll(async () => {
    await driver?.deleteServer(id).catch(() => {});
    await driver?.close();
    client?.close();
    await project?.remove();
  });

  const read = async () => (await incusExec(project.name, name, 'cat /root/note')).stdout;

  it('snapshots a running machine, and a restore puts its disk back but keeps its size', async () => {
    expect(driver.snapshots.whileRunning).toBe(true);
    await driver.createServer({
      id,
      size: 'small',
      region: 'eu',
      image: 'debian-12',
      bootstrapEnv: {},
      labels: { managedBy: 'svc-snapshot-test', kind: 'plain_vm', plainVmId: id },
      login: { user: 'debian', authorizedKeys: [] },
      firewall: DEFAULT_FIREWALL_RULES,
    });
    await waitFor(
      async () => (await driver.getServer(id))?.status === 'running',
      60_000,
      'running',
    );
    const first = await incusExec(project.name, name, 'echo first > /root/note && sync');
    expect(first.code).toBe(0);

    // As if an Agent's `svc` build were on the disk: the key recording it goes back with the disk.
    const build = (hash: string) =>
      client.call('PATCH', `/1.0/instances/${name}`, {
        body: { config: { [CLI_BUILD_KEY]: hash } },
      });
    await build('build-at-snapshot');
    const snapshotId = randomUUID();
    const taken = await driver.snapshots.create(id, snapshotId);
    expect(taken.ref).toBe(`svc-${snapshotId}`);
    // The test pool is btrfs with quotas: it accounts for the snapshot's own blocks.
    expect(Number.isInteger(taken.sizeBytes)).toBe(true);
    expect(taken.sizeBytes).toBeGreaterThan(0);
    // A retried create finds the snapshot the first made.
    expect((await driver.snapshots.create(id, snapshotId)).ref).toBe(taken.ref);
    const names = await client.call<string[]>('GET', `/1.0/instances/${name}/snapshots`);
    expect(names).toHaveLength(1);

    await incusExec(project.name, name, 'echo second > /root/note && sync');
    await build('build-after');
    expect(await read()).toBe('second\n');
    await expect(driver.snapshots.restore(id, taken.ref)).rejects.toThrow(/is running/);

    await driver.powerOff(id);
    // Resized after the snapshot: the restore brings back the disk, not the old limits.
    await driver.resize(id, { from: 'small', to: 'medium', region: 'eu' });
    await driver.snapshots.restore(id, taken.ref);
    const medium = instanceLimits('medium', 'eu', sizeFactor);
    const instance = await client.call<Instance>('GET', `/1.0/instances/${name}`);
    expect(instance.status).toBe('Stopped');
    expect(instance.config['limits.cpu']).toBe(String(medium.cpu));
    expect(instance.config['limits.memory']).toBe(`${medium.memoryMiB}MiB`);
    expect(instance.devices.root?.size).toBe(`${medium.diskGiB}GiB`);
    expect(instance.config[CLI_BUILD_KEY]).toBe('build-at-snapshot');
    expect(instance.config['user.svc.label.plainVmId']).toBe(id);

    await driver.powerOn(id);
    await waitFor(
      async () => (await driver.getServer(id))?.status === 'running',
      60_000,
      'running again',
    );
    expect(await read()).toBe('first\n');

    await expect(driver.snapshots.restore(id, 'svc-none')).rejects.toThrow();
    await driver.snapshots.remove(id, taken.ref);
    expect(await client.call<string[]>('GET', `/1.0/instances/${name}/snapshots`)).toEqual([]);
    // Gone already, and a machine that is gone: no error either way.
    await driver.snapshots.remove(id, taken.ref);
    await driver.snapshots.remove(randomUUID(), taken.ref);
  });
});
