import { describe, expect, it } from 'vitest';
import type { CreateServerSpec } from '../compute-driver.js';
import { alignmentPatch } from './incus-hardening.js';
import { type Instance, info, instanceBody } from './incus-instance.js';

const ID = '0b6f5c1e-3a52-4c1b-9a8e-7f1d2c3b4a59';
const options = {
  sizeFactor: 0.25,
  storagePool: 'default',
  network: 'incusbr0',
  instanceType: 'container' as const,
};
const spec: CreateServerSpec = {
  id: ID,
  size: 'small',
  region: 'eu',
  bootstrapEnv: {},
  labels: {},
};

const body = instanceBody(options, {
  name: `svc-${ID}`,
  spec,
  owner: { 'user.svc.machine-id': ID, 'user.svc.kind': 'agent' },
  source: 'svc-agent',
  address: '10.77.0.5',
  hwaddr: '02:11:22:33:44:55',
  bridgeCidr: '10.77.0.1/24',
});

describe('incus instance', () => {
  it('pins the NIC to its address and MAC, filtering anything else it sends', () => {
    expect(body.devices.eth0).toEqual({
      type: 'nic',
      network: 'incusbr0',
      name: 'eth0',
      'ipv4.address': '10.77.0.5',
      hwaddr: '02:11:22:33:44:55',
      'security.mac_filtering': 'true',
      'security.ipv4_filtering': 'true',
      'security.ipv6_filtering': 'true',
    });
  });

  it('limits processes and isolates the container (own UID range, no guest API, no nesting)', () => {
    expect(body.config).toMatchObject({
      'limits.processes': '512',
      'security.idmap.isolated': 'true',
      'security.privileged': 'false',
      'security.nesting': 'false',
      'security.guestapi': 'false',
      'security.syscalls.deny_compat': 'true',
    });
    // A virtual machine takes no container-only keys (Incus refuses them).
    const vm = instanceBody(
      { ...options, instanceType: 'virtual-machine' },
      {
        name: `svc-${ID}`,
        spec: { ...spec, login: { user: 'debian', authorizedKeys: [] } },
        owner: {},
        source: 'debian-12',
        address: '10.77.0.5',
        hwaddr: '02:11:22:33:44:55',
        bridgeCidr: '10.77.0.1/24',
      },
    );
    expect(vm.type).toBe('virtual-machine');
    expect(vm.config).toHaveProperty('security.guestapi', 'false');
    expect(vm.config).not.toHaveProperty('security.idmap.isolated');
    expect(vm.config).not.toHaveProperty('limits.processes');
  });

  it('reports only the pinned address, whatever the running instance says it has', () => {
    const running = {
      name: `svc-${ID}`,
      status: 'Running',
      config: { 'user.svc.machine-id': ID, 'user.svc.kind': 'agent' },
      devices: { eth0: { 'ipv4.address': '10.77.0.5' } },
      // What root inside can make Incus report: another machine's address first.
      state: {
        network: {
          eth0: {
            addresses: [
              { family: 'inet', address: '10.77.0.6', scope: 'global' },
              { family: 'inet', address: '10.77.0.5', scope: 'global' },
            ],
          },
        },
      },
    } as Instance;
    expect(info(running)).toMatchObject({
      ipv4: '10.77.0.5',
      gateway: { host: '10.77.0.5', port: 8443 },
    });
  });
});

describe('bringing an instance made before the isolation settings in line', () => {
  const old = (status: string): Instance => ({
    name: `svc-${ID}`,
    type: 'container',
    status,
    config: {
      'user.svc.machine-id': ID,
      'limits.memory': '1024MiB',
      'volatile.eth0.hwaddr': '10:66:6a:00:00:01',
    },
    devices: {
      eth0: { type: 'nic', network: 'incusbr0', name: 'eth0', 'ipv4.address': '10.77.0.5' },
    },
  });

  it('gives a stopped one everything, keeping the MAC Incus gave it', () => {
    const patch = alignmentPatch(old('Stopped'), 0.25);
    expect(patch?.devices.eth0).toEqual({
      type: 'nic',
      network: 'incusbr0',
      name: 'eth0',
      'ipv4.address': '10.77.0.5',
      hwaddr: '10:66:6a:00:00:01',
      'security.mac_filtering': 'true',
      'security.ipv4_filtering': 'true',
      'security.ipv6_filtering': 'true',
    });
    // 1024 MiB at a quarter is a small machine: its processes.
    expect(patch?.config).toEqual({
      'limits.processes': '512',
      'security.idmap.isolated': 'true',
      'security.privileged': 'false',
      'security.nesting': 'false',
      'security.guestapi': 'false',
      'security.syscalls.deny_compat': 'true',
    });
  });

  it('gives a running one the filtering now, its MAC and guest API at the next start', () => {
    const patch = alignmentPatch(old('Running'), 0.25);
    expect(patch?.devices.eth0).not.toHaveProperty('hwaddr');
    expect(patch?.devices.eth0).toMatchObject({ 'security.ipv4_filtering': 'true' });
    expect(patch?.config).not.toHaveProperty('security.guestapi');
    expect(patch?.config).toHaveProperty('security.idmap.isolated', 'true');
  });

  it('leaves an instance that has them all alone', () => {
    const made = {
      name: `svc-${ID}`,
      type: 'container' as const,
      status: 'Stopped',
      config: body.config,
      devices: body.devices as Record<string, Record<string, string>>,
    };
    expect(alignmentPatch(made, 0.25)).toBeUndefined();
  });
});
