import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES, type FirewallRule } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCUS_SOCKET, incusDriverOptions, requireIncus } from '../../../../test/incus.js';
import { keyPair, ssh } from '../../../../test/openssh.js';
import { waitFor } from '../../../../test/wait.js';
import { buildUserData } from '../cloud-init.js';
import type { CreateServerSpec } from '../compute-driver.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';

// Runs against the real Incus daemon of this host (`npm run incus:setup`), with `npm run
// test:incus`. Every instance and ACL it makes is named `svc-<uuid>` and removed at the end.

const NETWORK = 'incusbr0';
const options = incusDriverOptions('default', { network: NETWORK });

const driver = new IncusComputeDriver(options, pino({ level: 'silent' }));
const client = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
const sourceId = randomUUID();
const cloneId = randomUUID();
const missingImageId = randomUUID();
let dir: string;
let key: { file: string; publicLine: string };

const spec = (id: string, hostname: string, extra: Partial<CreateServerSpec> = {}) => {
  const login = { user: 'debian', authorizedKeys: [key.publicLine] };
  return {
    id,
    size: 'small',
    region: 'eu',
    image: 'debian-12',
    bootstrapEnv: {},
    // Not `managedBy: svc`: a service's reconciler on the same Incus project (the API test's)
    // would remove these as machines its database does not know.
    labels: { managedBy: 'svc-driver-test', kind: 'plain_vm', plainVmId: id },
    userData: buildUserData({ hostname, defaultUser: 'debian', authorizedKeys: [key.publicLine] }),
    login,
    firewall: DEFAULT_FIREWALL_RULES,
    ...extra,
  } satisfies CreateServerSpec;
};

const run = (host: string, command: string) => ssh(22, 'debian', key.file, command, host);

/** SSH answers once cloud-init has made the user (a few seconds after the start). */
const sshReady = (host: string) =>
  waitFor(
    async () => (await run(host, 'cloud-init status --wait >/dev/null; echo ready')).code === 0,
    60_000,
    `ssh to ${host}`,
  );

const addressOf = async (id: string) => {
  const server = await driver.getServer(id);
  expect(server?.ipv4).toMatch(/^10\.77\.0\.\d+$/);
  return server?.ipv4 as string;
};

const aclNames = async () =>
  (await client.call<string[]>('GET', '/1.0/network-acls')).map((url) => url.split('/').pop());
const bridgeAcls = async () =>
  (await client.call<{ config: Record<string, string> }>('GET', `/1.0/networks/${NETWORK}`)).config[
    'security.acls'
  ] ?? '';

beforeAll(async () => {
  requireIncus();
  await driver.connect();
  dir = await mkdtemp(path.join(tmpdir(), 'svc-incus-'));
  key = await keyPair(dir, 'vm-key');
});

afterAll(async () => {
  await Promise.allSettled(
    [sourceId, cloneId, missingImageId].map((id) => driver.deleteServer(id)),
  );
  await driver.close();
  client.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('IncusComputeDriver (real Incus)', { timeout: 90_000 }, () => {
  it('boots a Plain VM from debian-12 with the generated cloud-init, reachable as its default user', async () => {
    const created = await driver.createServer(spec(sourceId, 'svc-test-source'));
    expect(created).toMatchObject({
      id: sourceId,
      status: 'running',
      labels: { plainVmId: sourceId },
    });
    const address = created.ipv4 as string;
    expect(created.ssh).toEqual({ host: address, port: 22 });
    await sshReady(address);
    expect(await run(address, 'hostname')).toEqual({ code: 0, stdout: 'svc-test-source\n' });
    expect(await run(address, 'whoami')).toEqual({ code: 0, stdout: 'debian\n' });
    // The address it was given is the one it has (its firewall rules name it).
    // (Read until SSH answers it: under load a connection can fail with ssh's own 255.)
    const addresses = await waitFor(
      async () => {
        const shown = await run(address, 'ip -4 -o addr show eth0');
        return shown.code !== 255 && shown;
      },
      30_000,
      'ip addr over ssh',
    );
    expect(addresses).toMatchObject({ code: 0 });
    expect(addresses.stdout).toContain(` ${address}/24 `);

    // Idempotent after a crash: the same id finds the same machine.
    expect((await driver.createServer(spec(sourceId, 'svc-test-source'))).ipv4).toBe(address);
    const listed = await driver.listServers({ managedBy: 'svc-driver-test', plainVmId: sourceId });
    expect(listed.map((server) => server.id)).toEqual([sourceId]);
    expect(await driver.listServers({ plainVmId: 'someone-else' })).toEqual([]);
  });

  it('enforces the firewall: SSH is cut without a rule for 22 and back with one', {
    timeout: 180_000,
  }, async () => {
    const address = await addressOf(sourceId);
    expect(await driver.getFirewall(sourceId)).toEqual(DEFAULT_FIREWALL_RULES);
    const webOnly: FirewallRule[] = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '80-81',
        sourceIps: ['10.77.0.0/24'],
        description: 'web',
      },
      {
        direction: 'in',
        protocol: 'udp',
        port: '53',
        sourceIps: ['2001:db8::/32'],
        description: '',
      },
    ];
    expect(await driver.setFirewall(sourceId, webOnly)).toEqual(webOnly);
    expect(await driver.getFirewall(sourceId)).toEqual(webOnly);
    // Enforced within seconds (on a loaded host the bridge's rules lag the API's answer, and a
    // change waits its turn behind other processes' firewall changes).
    await waitFor(async () => (await run(address, 'hostname')).code === 255, 60_000, 'SSH cut');

    expect(await driver.setFirewall(sourceId, DEFAULT_FIREWALL_RULES)).toEqual(
      DEFAULT_FIREWALL_RULES,
    );
    await waitFor(async () => (await run(address, 'hostname')).code === 0, 60_000, 'SSH back');
    expect(await run(address, 'hostname')).toEqual({ code: 0, stdout: 'svc-test-source\n' });
  });

  it('powers off, on and reboots, each call idempotent', async () => {
    const address = await addressOf(sourceId);
    await driver.powerOff(sourceId);
    await driver.powerOff(sourceId);
    expect((await driver.getServer(sourceId))?.status).toBe('off');
    await driver.powerOn(sourceId);
    await driver.powerOn(sourceId);
    expect((await driver.getServer(sourceId))?.status).toBe('running');
    await sshReady(address);
    // /dev/shm is a tmpfs: a file there lasts until the next boot.
    expect(await run(address, 'touch /dev/shm/svc-booted && echo ok')).toEqual({
      code: 0,
      stdout: 'ok\n',
    });
    await driver.reboot(sourceId);
    expect((await driver.getServer(sourceId))?.status).toBe('running');
    await sshReady(address);
    expect((await run(address, 'test -e /dev/shm/svc-booted || echo gone')).stdout).toBe('gone\n');
  });

  it('clones a machine with its files, a new address and a new identity', async () => {
    const address = await addressOf(sourceId);
    expect((await run(address, 'echo from-source > ~/kept.txt')).code).toBe(0);
    const sourceMachineId = (await run(address, 'cat /etc/machine-id')).stdout;

    const clone = await driver.createServer(
      spec(cloneId, 'svc-test-clone', { sourceServerId: sourceId }),
    );
    expect(clone).toMatchObject({ id: cloneId, status: 'running', labels: { plainVmId: cloneId } });
    expect(clone.ipv4).toMatch(/^10\.77\.0\.\d+$/);
    expect(clone.ipv4).not.toBe(address);
    await sshReady(clone.ipv4 as string);
    expect(await run(clone.ipv4 as string, 'cat ~/kept.txt')).toEqual({
      code: 0,
      stdout: 'from-source\n',
    });
    expect(await run(clone.ipv4 as string, 'hostname')).toEqual({
      code: 0,
      stdout: 'svc-test-clone\n',
    });
    const cloneMachineId = (await run(clone.ipv4 as string, 'cat /etc/machine-id')).stdout;
    expect(cloneMachineId).toMatch(/^[0-9a-f]{32}\n$/);
    expect(cloneMachineId).not.toBe(sourceMachineId);
    // The source is untouched and still answers at its own address.
    expect(await run(address, 'hostname')).toEqual({ code: 0, stdout: 'svc-test-source\n' });
    expect(await driver.getFirewall(cloneId)).toEqual(DEFAULT_FIREWALL_RULES);
  });

  it('refuses an image it does not have with image_unavailable, leaving nothing behind', async () => {
    await expect(
      driver.createServer(spec(missingImageId, 'svc-test-none', { image: 'svc-no-such-image' })),
    ).rejects.toThrow(/image_unavailable/);
    expect(await driver.getServer(missingImageId)).toBeUndefined();
    expect(await aclNames()).not.toContain(`svc-${missingImageId}`);
  });

  it('deletes machines with their firewalls, and deleting again succeeds', async () => {
    for (const id of [cloneId, sourceId]) {
      await driver.deleteServer(id);
      await driver.deleteServer(id);
      expect(await driver.getServer(id)).toBeUndefined();
      expect(await driver.getFirewall(id)).toBeUndefined();
    }
    const acls = await aclNames();
    const attached = await bridgeAcls();
    for (const id of [sourceId, cloneId]) {
      expect(acls).not.toContain(`svc-${id}`);
      expect(attached).not.toContain(`svc-${id}`);
    }
    expect(await driver.listServers({ plainVmId: sourceId })).toEqual([]);
  });
});
