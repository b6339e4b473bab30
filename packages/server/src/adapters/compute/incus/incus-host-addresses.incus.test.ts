import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { INCUS_SOCKET, requireIncus } from '../../../../test/incus.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { IncusClient } from './incus-client.js';

// On one server (not a cluster) the addresses closed to machines are the host's own, read from
// the real daemon without asking for cluster members (the cluster's case: the stand-in in
// incus-bridge-firewall.test.ts).

requireIncus();
const client = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
afterAll(() => client.close());

describe('the host’s addresses on one Incus server', () => {
  it('are every IPv4 address of this host, the bridge’s included', async () => {
    const firewall = new IncusBridgeFirewall(client, 'incusbr0');
    const host = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address?.family === 'IPv4' && !address.internal)
      .map((address) => address?.address as string);
    const read = await firewall.hostAddresses();
    expect(read).toContain('10.77.0.1');
    expect(read).toEqual(expect.arrayContaining(host));
    // Read again on refresh: the same answer, and still no cluster call (it would fail here).
    expect(await firewall.hostAddresses(true)).toEqual(read);
  });
});
