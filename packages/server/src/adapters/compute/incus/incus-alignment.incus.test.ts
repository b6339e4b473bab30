import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../../../test/incus.js';
import { incusExec } from '../../../../test/incus-exec.js';
import { waitFor } from '../../../../test/wait.js';
import { buildUserData } from '../cloud-init.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';
import type { AclRule } from './incus-firewall.js';
import { alignmentPatch } from './incus-hardening.js';
import type { Instance, WritableInstance } from './incus-instance.js';
import { freeAddress } from './incus-instance-spec.js';

// A machine made before the isolation settings (no NIC filtering, no fixed MAC, shared UIDs, the
// guest API, an ACL letting it out everywhere) is brought in line by the reconciler's driver
// pass, and fully at its next start through the driver: on the real daemon.

const SERVICE_PORT = 18_080;
const id = randomUUID();
const name = `svc-${id}`;
let project: Awaited<ReturnType<typeof createIncusProject>>;
let client: IncusClient;
/**
 * Every change here outside the driver takes the lock the driver's firewall changes take: Incus
 * rewrites the bridge's whole ruleset at each, and two at once can leave a stale one enforced
 * (another file's machines would get this one's old rules).
 */
let locked: <T>(change: () => Promise<T>) => Promise<T>;
let driver: IncusComputeDriver;
let address: string;

const instance = () => client.call<Instance>('GET', `/1.0/instances/${name}`);
const exec = (script: string) => incusExec(project.name, name, script);
const uidBase = async () => Number((await exec('cat /proc/self/uid_map')).stdout.split(/\s+/)[2]);

beforeAll(async () => {
  project = await createIncusProject();
  client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
  const firewall = new IncusBridgeFirewall(client, 'incusbr0');
  locked = (change) => firewall.exclusive(change);
  driver = new IncusComputeDriver(
    incusDriverOptions(project.name, { serviceUrl: `http://localhost:${SERVICE_PORT}` }),
    pino({ level: 'silent' }),
  );
  await driver.connect();
  const created = await driver.createServer({
    id,
    size: 'small',
    region: 'eu',
    image: 'debian-12',
    bootstrapEnv: {},
    labels: { managedBy: 'svc-alignment-test', kind: 'plain_vm', plainVmId: id },
    userData: buildUserData({ hostname: 'svc-old', defaultUser: 'debian', authorizedKeys: [] }),
    login: { user: 'debian', authorizedKeys: [] },
  });
  address = created.ipv4 as string;

  // Made the way older versions made it: stopped, its settings taken away, started by Incus.
  await driver.powerOff(id);
  const { metadata, etag } = await client.request<Instance & WritableInstance>(
    'GET',
    `/1.0/instances/${name}`,
  );
  const config = Object.fromEntries(
    Object.entries(metadata.config).filter(
      ([key]) => !key.startsWith('security.') && key !== 'limits.processes',
    ),
  );
  const eth0 = metadata.devices.eth0 as Record<string, string>;
  const { architecture, ephemeral, profiles, stateful, description } = metadata;
  await locked(() =>
    client.call('PUT', `/1.0/instances/${name}`, {
      body: {
        architecture,
        ephemeral,
        profiles,
        stateful,
        description,
        config,
        devices: {
          ...metadata.devices,
          eth0: {
            type: 'nic',
            network: 'incusbr0',
            name: 'eth0',
            'ipv4.address': eth0['ipv4.address'] as string,
          },
        },
      },
      ...(etag && { headers: { 'If-Match': etag } }),
    }),
  );
  const acl = await client.call<{ config: Record<string, string>; ingress: AclRule[] }>(
    'GET',
    `/1.0/network-acls/${name}`,
  );
  await locked(() =>
    client.call('PUT', `/1.0/network-acls/${name}`, {
      body: {
        config: acl.config,
        ingress: acl.ingress,
        egress: [
          {
            action: 'allow',
            state: 'enabled',
            source: `${address}/32`,
            destination: '0.0.0.0/1,128.0.0.0/1',
          },
        ],
      },
    }),
  );
  await locked(() =>
    client.call('PUT', `/1.0/instances/${name}/state`, { body: { action: 'start' } }),
  );
  await waitFor(
    async () => (await exec('ip -4 -o addr show eth0')).stdout.includes(` ${address}/`),
    120_000,
    'the old machine on its address',
  );
}, 300_000);

afterAll(async () => {
  await driver?.deleteServer(id).catch(() => {});
  await driver?.close();
  client?.close();
  await project?.remove();
}, 180_000);

describe('machines made before the isolation settings', { timeout: 180_000 }, () => {
  it('run without them at first (the starting point)', async () => {
    const old = await instance();
    expect(old.devices.eth0).not.toHaveProperty('security.ipv4_filtering');
    expect(old.config).not.toHaveProperty('security.idmap.isolated');
    expect((await exec('test -e /dev/incus && echo present')).stdout).toBe('present\n');
  });

  it('get the filtering, limits and egress rules from the reconciler, running', async () => {
    const macBefore = (await instance()).config['volatile.eth0.hwaddr'];
    await driver.reconcile();
    const now = await instance();
    expect(now.status).toBe('Running');
    expect(now.devices.eth0).toMatchObject({
      'ipv4.address': address,
      'security.mac_filtering': 'true',
      'security.ipv4_filtering': 'true',
      'security.ipv6_filtering': 'true',
    });
    // Its MAC is not changed while it runs (that would unplug its interface).
    expect(now.devices.eth0).not.toHaveProperty('hwaddr');
    expect(now.config['volatile.eth0.hwaddr']).toBe(macBefore);
    expect(now.config).toMatchObject({
      'limits.processes': '512',
      'security.idmap.isolated': 'true',
      'security.nesting': 'false',
    });
    // It still has its network: the host's DNS answers it.
    expect((await exec("timeout 5 bash -c '</dev/tcp/10.77.0.1/53' && echo ok")).stdout).toBe(
      'ok\n',
    );
    const acl = await client.call<{ egress: AclRule[] }>('GET', `/1.0/network-acls/${name}`);
    expect(acl.egress).toHaveLength(4);
    expect(acl.egress.find((rule) => rule.description === 'the service')).toMatchObject({
      protocol: 'tcp',
      destination: '10.77.0.1/32',
      destination_port: String(SERVICE_PORT),
    });
    const outside = (acl.egress.at(-1)?.destination ?? '').split(',');
    expect(outside).not.toContain('0.0.0.0/1');
    expect(outside).toContain('11.0.0.0/8');
  });

  it('get the rest at their next restart through the driver, and then nothing more', async () => {
    const macBefore = (await instance()).config['volatile.eth0.hwaddr'];
    const sharedBase = await uidBase();
    // A restart (the user's) stops and starts it, so that its MAC can be fixed.
    await driver.reboot(id);
    const now = await instance();
    expect(now.devices.eth0?.hwaddr).toBe(macBefore);
    expect(now.config['security.guestapi']).toBe('false');
    await waitFor(
      async () => (await exec('ip -4 -o addr show eth0')).stdout.includes(` ${address}/`),
      120_000,
      'the machine back on its address',
    );
    expect((await exec('test -e /dev/incus && echo present; echo checked')).stdout).toBe(
      'checked\n',
    );
    expect(await uidBase()).not.toBe(sharedBase);
    expect(alignmentPatch(now, 0.25)).toBeUndefined();
    expect((await driver.getServer(id))?.ipv4).toBe(address);
  });
});

describe('a new machine and an address a leftover ACL still names', { timeout: 180_000 }, () => {
  it('never gets that address (the leftover would give it its rules)', async () => {
    // The address a placement that asks only instances and leases would pick next...
    const [instances, leases] = await Promise.all([
      client.call<Instance[]>('GET', '/1.0/instances', {
        query: { recursion: '1', 'all-projects': 'true' },
      }),
      client.call<{ address: string }[]>('GET', '/1.0/networks/incusbr0/leases'),
    ]);
    const used = new Set([
      ...leases.map((lease) => lease.address),
      ...instances.map((each) => each.devices?.eth0?.['ipv4.address'] as string),
    ]);
    // ...named by a machine's ACL whose instance is gone (left by a crash or another service;
    // not on the bridge, so it changes no traffic here).
    const taken = freeAddress('10.77.0.1/24', used) as string;
    const leftoverId = randomUUID();
    const newId = randomUUID();
    await locked(() =>
      client.call('POST', '/1.0/network-acls', {
        body: {
          name: `svc-${leftoverId}`,
          config: { 'user.svc.machine-id': leftoverId, 'user.svc.project': project.name },
          egress: [
            { action: 'allow', state: 'enabled', source: `${taken}/32`, destination: '0.0.0.0/0' },
          ],
        },
      }),
    );
    try {
      const made = await driver.createServer({
        id: newId,
        size: 'small',
        region: 'eu',
        image: 'debian-12',
        bootstrapEnv: {},
        labels: { managedBy: 'svc-alignment-test', kind: 'plain_vm', plainVmId: newId },
        userData: buildUserData({ hostname: 'svc-new', defaultUser: 'debian', authorizedKeys: [] }),
        login: { user: 'debian', authorizedKeys: [] },
      });
      expect(made.ipv4).toMatch(/^10\.77\.0\.\d+$/);
      expect(made.ipv4).not.toBe(taken);
    } finally {
      await driver.deleteServer(newId);
      await locked(() => client.call('DELETE', `/1.0/network-acls/svc-${leftoverId}`));
    }
  });
});
