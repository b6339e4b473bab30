import { describe, expect, it } from 'vitest';
import { ComputeUnavailable } from '../compute-driver.js';
import {
  BRIDGE_NF_DIR,
  type ProcReader,
  requireBridgeNetfilter,
} from './incus-bridge-netfilter.js';

/** A kernel whose proc files hold these values; an absent key is a missing file. */
const kernel =
  (values: Record<string, string>): ProcReader =>
  async (file) =>
    values[file.slice(BRIDGE_NF_DIR.length + 1)];

describe('requireBridgeNetfilter', () => {
  it('passes when bridged IPv4 and IPv6 both go through the firewall', async () => {
    await expect(
      requireBridgeNetfilter(
        kernel({ 'bridge-nf-call-iptables': '1\n', 'bridge-nf-call-ip6tables': '1\n' }),
      ),
    ).resolves.toBeUndefined();
  });

  it('refuses, naming the key and the fix, when either is 0', async () => {
    const cases: [string, string, string][] = [
      ['0\n', '1\n', 'net.bridge.bridge-nf-call-iptables is not 1'],
      ['1\n', '0\n', 'net.bridge.bridge-nf-call-ip6tables is not 1'],
    ];
    for (const [ip4, ip6, key] of cases) {
      const check = requireBridgeNetfilter(
        kernel({ 'bridge-nf-call-iptables': ip4, 'bridge-nf-call-ip6tables': ip6 }),
      );
      await expect(check).rejects.toThrow(ComputeUnavailable);
      await expect(check).rejects.toThrow(key);
      await expect(check).rejects.toThrow('sudo npm run incus:setup');
    }
  });

  it('refuses when the module is not loaded (no proc files)', async () => {
    const check = requireBridgeNetfilter(kernel({}));
    await expect(check).rejects.toThrow(ComputeUnavailable);
    await expect(check).rejects.toThrow(/br_netfilter module is not loaded.*modprobe br_netfilter/);
  });
});
