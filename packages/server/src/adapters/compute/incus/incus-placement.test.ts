import { describe, expect, it } from 'vitest';
import { instanceLeases, instanceMacs } from './incus-placement.js';

describe('the leased addresses placement counts as taken', () => {
  const instances = [
    // Incus gave this NIC its MAC (in any project: the bridge is shared).
    { config: { 'volatile.eth0.hwaddr': '10:66:6A:00:00:01' }, devices: {} },
    // A machine of the service: its MAC is fixed on the NIC.
    { config: {}, devices: { eth0: { type: 'nic', hwaddr: '02:aa:bb:cc:dd:ee' } } },
    // Being created or deleted: no config or devices yet.
    {} as { config: Record<string, string>; devices: Record<string, Record<string, string>> },
  ];

  it("counts an instance's lease and a static one, not leases under made-up MACs", () => {
    const leases = [
      { address: '10.77.0.20', hwaddr: '10:66:6a:00:00:01', type: 'dynamic' },
      { address: '10.77.0.21', hwaddr: '02:AA:BB:CC:DD:EE', type: 'dynamic' },
      { address: '10.77.0.22', hwaddr: '00:16:3e:12:34:56', type: 'static' },
      // A tenant asking dnsmasq for leases with invented MACs.
      ...Array.from({ length: 200 }, (_, index) => ({
        address: `10.77.0.${index + 30}`,
        hwaddr: `de:ad:be:ef:00:${(index % 256).toString(16).padStart(2, '0')}`,
        type: 'dynamic',
      })),
      { address: '10.77.0.23', type: 'dynamic' },
    ];
    expect(instanceLeases(leases, instanceMacs(instances))).toEqual([
      '10.77.0.20',
      '10.77.0.21',
      '10.77.0.22',
    ]);
  });
});
