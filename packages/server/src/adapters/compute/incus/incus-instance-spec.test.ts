import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  freeAddress,
  instanceLimits,
  instanceName,
  labelConfig,
  labelsOf,
  machineMac,
  staticNetworkConfig,
} from './incus-instance-spec.js';

describe('incus instance spec', () => {
  it('names instances after machine ids, within Incus’s rules', () => {
    const id = '0b6f5c1e-3a52-4c1b-9a8e-7f1d2c3b4a59';
    const name = instanceName(id) as string;
    expect(name).toBe(`svc-${id}`);
    expect(name).toMatch(/^[a-z][a-z0-9-]{0,62}$/);
    for (const bad of ['', '../etc', 'svc-x', `${id}x`, id.toUpperCase()]) {
      expect(instanceName(bad)).toBeUndefined();
    }
  });

  it('scales the size table, never below one CPU, 256 MiB, 1 GiB and 512 processes', () => {
    expect(instanceLimits('small', 'us', 1)).toEqual({
      cpu: 3,
      memoryMiB: 4096,
      diskGiB: 80,
      processes: 2048,
    });
    expect(instanceLimits('large', 'eu', 0.5)).toEqual({
      cpu: 4,
      memoryMiB: 8192,
      diskGiB: 160,
      processes: 4096,
    });
    expect(instanceLimits('small', 'eu', 0.01)).toEqual({
      cpu: 1,
      memoryMiB: 256,
      diskGiB: 1,
      processes: 512,
    });
  });

  it('gives each machine its own fixed, locally administered unicast MAC', () => {
    const id = '0b6f5c1e-3a52-4c1b-9a8e-7f1d2c3b4a59';
    const mac = machineMac(id);
    expect(mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    const first = Number.parseInt(mac.slice(0, 2), 16);
    expect(first & 0b11).toBe(0b10);
    expect(machineMac(id)).toBe(mac);
    expect(machineMac(id, 1)).not.toBe(mac);
    expect(machineMac('1b6f5c1e-3a52-4c1b-9a8e-7f1d2c3b4a59')).not.toBe(mac);
  });

  it('stores labels as user config keys and reads them back alone', () => {
    const labels = { managedBy: 'svc', kind: 'plain_vm', plainVmId: 'x' };
    const config: Record<string, string> = {
      ...labelConfig(labels),
      'limits.cpu': '1',
      'user.other': 'y',
    };
    expect(config['user.svc.label.plainVmId']).toBe('x');
    expect(labelsOf(config)).toEqual(labels);
  });

  it('picks the lowest address of the subnet that is neither reserved nor used', () => {
    expect(freeAddress('10.77.0.1/24', new Set())).toBe('10.77.0.2');
    expect(freeAddress('10.77.0.1/24', new Set(['10.77.0.2', '10.77.0.3']))).toBe('10.77.0.4');
    expect(freeAddress('10.77.0.254/24', new Set())).toBe('10.77.0.1');
    const all = new Set(Array.from({ length: 253 }, (_, i) => `10.77.0.${i + 2}`));
    expect(freeAddress('10.77.0.1/24', all)).toBeUndefined();
    expect(freeAddress('10.77.0.1/30', new Set())).toBe('10.77.0.2');
    expect(freeAddress('10.77.0.1/30', new Set(['10.77.0.2']))).toBeUndefined();
  });

  it('gives eth0 its pinned address statically, through the bridge', () => {
    expect(parse(staticNetworkConfig('10.77.0.9', '10.77.0.1/24'))).toEqual({
      version: 1,
      config: [
        {
          type: 'physical',
          name: 'eth0',
          subnets: [
            {
              type: 'static',
              address: '10.77.0.9/24',
              gateway: '10.77.0.1',
              dns_nameservers: ['10.77.0.1'],
            },
          ],
        },
      ],
    });
  });
});
