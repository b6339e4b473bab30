import {
  DEFAULT_FIREWALL_RULES,
  type FirewallRule,
  type FirewallRuleInput,
  getPlainVmFirewall,
  putPlainVmFirewall,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hetznerTestContext } from '../../test/hetzner/driver.js';
import { runningPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import type { TestContext } from '../../test/test-context.js';
import { firewallSync } from './firewall-sync.js';

// A Plain VM's firewall through the HTTP API on the hetzner driver, against the stand-in of
// Hetzner Cloud: one Hetzner firewall per VM, its rules replaced with set_rules and answered as
// Hetzner re-reads them; a change made at Hetzner by hand is undone by the reconciler.

const MOSH: FirewallRule = {
  direction: 'in',
  protocol: 'udp',
  port: '60000-61000',
  sourceIps: ['203.0.113.0/24', '2001:db8::/32'],
  description: 'mosh',
};

describe('Plain VM firewalls on the hetzner driver', () => {
  let setup: Awaited<ReturnType<typeof hetznerTestContext>>;
  let t: TestContext;
  let client: TestClient;
  let hetzner: Awaited<ReturnType<typeof hetznerTestContext>>['hetzner'];
  beforeAll(async () => {
    setup = await hetznerTestContext();
    ({ t, client, hetzner } = setup);
  });
  afterAll(() => setup?.close());

  let n = 0;
  const runningVm = () => {
    n += 1;
    return runningPlainVm(client, `fw-${n}`, 30_000);
  };
  const put = (id: string, rules: FirewallRuleInput[]) =>
    client.call(putPlainVmFirewall, { params: { id }, body: { rules } });
  const refusedPut = (id: string, rules: FirewallRuleInput[]) =>
    client.callError(putPlainVmFirewall, { params: { id }, body: { rules } });
  const shown = async (id: string) =>
    (await client.call(getPlainVmFirewall, { params: { id } })).body.rules;
  const firewallAtHetzner = (id: string) =>
    [...hetzner.standIn.state.firewalls.values()].find((f) => f.labels['svc/machine'] === id);

  it('starts with SSH only, behind its own Hetzner firewall applied to its server', async () => {
    const id = await runningVm();
    expect(await shown(id)).toEqual(DEFAULT_FIREWALL_RULES);
    const firewall = firewallAtHetzner(id);
    const server = [...hetzner.standIn.state.servers.values()].find(
      (s) => s.labels['svc/machine'] === id,
    );
    expect(firewall?.appliedTo).toEqual([{ type: 'server', server: { id: server?.id } }]);
    expect(firewall?.rules).toEqual([
      {
        direction: 'in',
        protocol: 'tcp',
        port: '22',
        source_ips: ['0.0.0.0/0', '::/0'],
        destination_ips: [],
        description: 'SSH',
      },
    ]);
  });

  it('replaces the rules and answers with them as Hetzner re-read them (canonical IPv6, /32 for a bare address)', async () => {
    const id = await runningVm();
    const res = await put(id, [
      { protocol: 'udp', port: '60000-61000', sourceIps: ['203.0.113.0/24', '2001:0DB8::/32'] },
      { protocol: 'tcp', port: 443, sourceIps: ['198.51.100.7'], description: 'web' },
    ]);
    expect(res.body.rules).toEqual([
      { ...MOSH, description: '' },
      {
        direction: 'in',
        protocol: 'tcp',
        port: '443',
        sourceIps: ['198.51.100.7/32'],
        description: 'web',
      },
    ]);
    expect(await shown(id)).toEqual(res.body.rules);
    expect(firewallAtHetzner(id)?.rules.map((r) => r.source_ips)).toEqual([
      ['203.0.113.0/24', '2001:db8::/32'],
      ['198.51.100.7/32'],
    ]);
    // An empty set closes everything inbound.
    expect((await put(id, [])).body.rules).toEqual([]);
    expect(firewallAtHetzner(id)?.rules).toEqual([]);
  });

  it('refuses what Hetzner would refuse before calling it, and changes nothing', async () => {
    const id = await runningVm();
    const before = structuredClone(firewallAtHetzner(id)?.rules);
    const tooMany = Array.from({ length: 51 }, (_, i) => ({
      protocol: 'tcp' as const,
      port: 1000 + i,
      sourceIps: ['0.0.0.0/0'],
    }));
    expect((await refusedPut(id, tooMany)).status).toBe(400);
    // Refused on purpose: the cast lets a protocol the contract's types exclude through.
    const icmp = { protocol: 'icmp', port: 1, sourceIps: ['0.0.0.0/0'] };
    expect((await refusedPut(id, [icmp as FirewallRuleInput])).status).toBe(400);
    expect(firewallAtHetzner(id)?.rules).toEqual(before);
  });

  it('undoes a change made at Hetzner by hand in the reconciler', async () => {
    const id = await runningVm();
    await put(id, [MOSH]);
    const firewall = firewallAtHetzner(id);
    if (!firewall) throw new Error('no firewall at Hetzner');
    firewall.rules = [];
    await firewallSync({
      database: t.ctx.database,
      clock: t.ctx.clock,
      compute: hetzner.driver,
      log: t.ctx.log.root,
      leaseWaitMs: 0,
    }).reconcile();
    expect(firewallAtHetzner(id)?.rules.map((r) => r.port)).toEqual(['60000-61000']);
    expect(await shown(id)).toEqual([MOSH]);
  });
});
