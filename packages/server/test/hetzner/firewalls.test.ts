import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conformance } from './conformance.js';
import { type HetznerStandIn, startHetznerStandIn } from './stand-in.js';
import {
  type Api,
  apiOf,
  conformanceOrWarn,
  expectConformant,
  SERVER_BODY,
  waitForAction,
} from './test-helpers.js';

const SSH_IN = { direction: 'in', protocol: 'tcp', port: '22', source_ips: ['0.0.0.0/0', '::/0'] };

describe('Hetzner stand-in: firewalls', () => {
  let conformance: Conformance | undefined;
  let standIn: HetznerStandIn;
  let api: Api;
  let serverId: number;

  beforeAll(async () => {
    conformance = await conformanceOrWarn();
    standIn = await startHetznerStandIn({ conformance, actionMs: 50, limits: { firewalls: 3 } });
    api = apiOf(standIn);
    const { body } = await api('POST', '/servers', {
      ...SERVER_BODY,
      name: 'fw-host',
      labels: { role: 'web' },
    });
    serverId = body.server.id;
    await waitForAction(api, body.next_actions[0].id);
  });
  afterAll(async () => {
    await standIn.close();
  });

  it('creates a firewall applied to a server, with one apply action per server', async () => {
    const created = await api('POST', '/firewalls', {
      name: 'fw-1',
      labels: { 'svc/machine': 'm1' },
      rules: [SSH_IN],
      apply_to: [{ type: 'server', server: { id: serverId } }],
    });
    expect(created.status).toBe(201);
    expect(created.body.firewall.rules).toEqual([
      { ...SSH_IN, description: null, destination_ips: [] },
    ]);
    expect(created.body.firewall.applied_to).toEqual([
      { type: 'server', server: { id: serverId } },
    ]);
    expect(created.body.actions.map((a: { command: string }) => a.command)).toEqual([
      'apply_firewall',
    ]);
    const server = await api('GET', `/servers/${serverId}`);
    expect(server.body.server.public_net.firewalls).toEqual([
      { id: created.body.firewall.id, status: 'applied' },
    ]);
    expect((await api('POST', '/firewalls', { name: 'fw-1' })).body.error.code).toBe(
      'uniqueness_error',
    );
    const listed = await api('GET', '/firewalls?label_selector=svc%2Fmachine%3Dm1');
    expect(listed.body.firewalls.map((f: { name: string }) => f.name)).toEqual(['fw-1']);
  });

  it('replaces all rules with set_rules and answers IPv6 networks in RFC 5952 form', async () => {
    const fw = standIn.state.firewalls.values().next().value!;
    const set = await api('POST', `/firewalls/${fw.id}/actions/set_rules`, {
      rules: [
        { direction: 'in', protocol: 'tcp', port: '80-443', source_ips: ['2001:0DB8:0::/32'] },
        { direction: 'in', protocol: 'icmp', source_ips: ['10.0.0.0/8'], description: 'ping' },
        { direction: 'out', protocol: 'udp', port: '53', destination_ips: ['::/0'] },
      ],
    });
    expect(set.status).toBe(201);
    expect(set.body.actions.map((a: { command: string }) => a.command)).toEqual([
      'set_firewall_rules',
      'apply_firewall',
    ]);
    const read = await api('GET', `/firewalls/${fw.id}`);
    expect(read.body.firewall.rules).toEqual([
      {
        description: null,
        direction: 'in',
        protocol: 'tcp',
        port: '80-443',
        source_ips: ['2001:db8::/32'],
        destination_ips: [],
      },
      {
        description: 'ping',
        direction: 'in',
        protocol: 'icmp',
        port: null,
        source_ips: ['10.0.0.0/8'],
        destination_ips: [],
      },
      {
        description: null,
        direction: 'out',
        protocol: 'udp',
        port: '53',
        source_ips: [],
        destination_ips: ['::/0'],
      },
    ]);
    const emptied = await api('POST', `/firewalls/${fw.id}/actions/set_rules`, { rules: [] });
    expect(emptied.status).toBe(201);
    expect((await api('GET', `/firewalls/${fw.id}`)).body.firewall.rules).toEqual([]);
  });

  it('refuses host bits, ports on icmp, missing ports and bare addresses (422)', async () => {
    const fw = standIn.state.firewalls.values().next().value!;
    for (const rule of [
      { direction: 'in', protocol: 'tcp', port: '22', source_ips: ['10.0.0.1/8'] },
      { direction: 'in', protocol: 'icmp', port: '22', source_ips: ['0.0.0.0/0'] },
      { direction: 'in', protocol: 'tcp', source_ips: ['0.0.0.0/0'] },
      { direction: 'in', protocol: 'tcp', port: '22', source_ips: ['192.0.2.1'] },
      { direction: 'in', protocol: 'tcp', port: '0-70000', source_ips: ['0.0.0.0/0'] },
    ]) {
      const answer = await api('POST', `/firewalls/${fw.id}/actions/set_rules`, { rules: [rule] });
      expect(answer.status, JSON.stringify(rule)).toBe(422);
      expect(answer.body.error.code).toBe('invalid_input');
    }
  });

  it('refuses more than 50 rules (422) without a conformance checker', async () => {
    // 51 rules break the request schema itself (maxItems 50): no checker on this stand-in.
    const plain = await startHetznerStandIn();
    try {
      const rules = Array.from({ length: 51 }, (_, i) => ({ ...SSH_IN, port: String(i + 1) }));
      const answer = await apiOf(plain)('POST', '/firewalls', { name: 'many', rules });
      expect(answer.status).toBe(422);
      expect(answer.body.error.details.fields[0].name).toBe('rules');
    } finally {
      await plain.close();
    }
  });

  it('applies by label selector, removes, refuses a double apply', async () => {
    const created = await api('POST', '/firewalls', {
      name: 'fw-web',
      apply_to: [{ type: 'label_selector', label_selector: { selector: 'role=web' } }],
    });
    expect(created.body.actions).toHaveLength(1);
    expect(created.body.firewall.applied_to[0].applied_to_resources).toEqual([
      { type: 'server', server: { id: serverId } },
    ]);
    const id = created.body.firewall.id;
    const again = await api('POST', `/firewalls/${id}/actions/apply_to_resources`, {
      apply_to: [{ type: 'label_selector', label_selector: { selector: 'role=web' } }],
    });
    expect(again.body.error.code).toBe('firewall_already_applied');
    const removed = await api('POST', `/firewalls/${id}/actions/remove_from_resources`, {
      remove_from: [{ type: 'label_selector', label_selector: { selector: 'role=web' } }],
    });
    expect(removed.body.actions.map((a: { command: string }) => a.command)).toEqual([
      'remove_firewall',
    ]);
    expect((await api('DELETE', `/firewalls/${id}`)).status).toBe(204);
  });

  it('answers 403 beyond the firewall limit', async () => {
    expect((await api('POST', '/firewalls', { name: 'fw-2' })).status).toBe(201);
    expect((await api('POST', '/firewalls', { name: 'fw-3' })).status).toBe(201);
    const over = await api('POST', '/firewalls', { name: 'fw-4' });
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe('resource_limit_exceeded');
  });

  it('refuses to delete a firewall in use (422) until its server is deleted (204)', async () => {
    const fw = [...standIn.state.firewalls.values()].find((f) => f.name === 'fw-1')!;
    const inUse = await api('DELETE', `/firewalls/${fw.id}`);
    expect(inUse.status).toBe(422);
    expect(inUse.body.error.code).toBe('resource_in_use');
    const deleted = await api('DELETE', `/servers/${serverId}`);
    await waitForAction(api, deleted.body.action.id);
    expect((await api('GET', `/firewalls/${fw.id}`)).body.firewall.applied_to).toEqual([]);
    expect((await api('DELETE', `/firewalls/${fw.id}`)).status).toBe(204);
    expect((await api('GET', `/firewalls/${fw.id}`)).status).toBe(404);
  });

  it('answered every exchange as the description says', () => {
    expectConformant(conformance);
  });
});
