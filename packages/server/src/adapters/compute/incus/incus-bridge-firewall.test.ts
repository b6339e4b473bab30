import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type SeenRequest,
  sendIncusJson,
  startIncusStandIn,
} from '../../../../test/incus-stand-in.js';
import { waitFor } from '../../../../test/wait.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { IncusClient } from './incus-client.js';

// How the bridge's ACL list survives other processes writing it at the same time, against a
// stand-in whose faults each test sets (the real daemon: incus-compute-driver.incus.test.ts).

interface Faults {
  /** Before applying the n-th PATCH, another writer puts this list (and the ETag moves on). */
  concurrentListAt?: { patch: number; list: string };
  /** The n-th PATCH answers success but is undone by a writer that passed the same ETag. */
  lostPatch?: number;
  /** DELETEs of an ACL that fail as "in use" (the stand-in re-attaches it, as a lost write would). */
  inUseDeletes?: number;
}

/** The identity an ACL carries (what the driver passes: `ownerConfig`). */
const OWNER = { 'user.svc.machine-id': 'a' };
const ok = { type: 'sync', status_code: 200 };

async function standInNetwork(faults: Faults) {
  const config: Record<string, string> = {
    'ipv4.address': '10.77.0.1/24',
    'security.acls': 'svc-other',
  };
  const acls = new Map<string, unknown>();
  let version = 1;
  let patches = 0;
  let inUseDeletes = faults.inUseDeletes ?? 0;
  const etag = () => `"n${version}"`;
  const answer = (req: SeenRequest, res: Parameters<typeof sendIncusJson>[0]) => {
    const url = new URL(req.url, 'http://incus');
    const acl = url.pathname.match(/^\/1\.0\/network-acls\/(.+)$/)?.[1];
    if (url.pathname === '/1.0/networks/incusbr0' && req.method === 'GET') {
      return sendIncusJson(res, 200, { ...ok, metadata: { config: { ...config } } }, etag());
    }
    if (url.pathname === '/1.0/networks/incusbr0' && req.method === 'PATCH') {
      patches += 1;
      if (faults.concurrentListAt?.patch === patches) {
        config['security.acls'] = faults.concurrentListAt.list;
        version += 1;
      }
      if (req.headers['if-match'] !== etag()) {
        return sendIncusJson(res, 412, { type: 'error', error_code: 412, error: 'ETag mismatch' });
      }
      if (faults.lostPatch !== patches) {
        Object.assign(config, JSON.parse(req.body).config);
        for (const key of Object.keys(config)) if (config[key] === '') delete config[key];
      }
      version += 1;
      return sendIncusJson(res, 200, { ...ok, metadata: {} });
    }
    // The host's interfaces, whose addresses no machine may reach (egress rules).
    if (url.pathname === '/1.0/networks' && req.method === 'GET') {
      return sendIncusJson(res, 200, { ...ok, metadata: ['/1.0/networks/incusbr0'] });
    }
    if (url.pathname === '/1.0/networks/incusbr0/state') {
      const addresses = [{ family: 'inet', address: '10.77.0.1' }];
      return sendIncusJson(res, 200, { ...ok, metadata: { addresses } });
    }
    if (acl && req.method === 'GET') {
      if (!acls.has(acl)) return sendIncusJson(res, 404, { type: 'error', error: 'not found' });
      return sendIncusJson(res, 200, { ...ok, metadata: acls.get(acl) });
    }
    if (acl && req.method === 'PUT') {
      if (!acls.has(acl)) return sendIncusJson(res, 404, { type: 'error', error: 'not found' });
      acls.set(acl, JSON.parse(req.body));
      return sendIncusJson(res, 200, { ...ok, metadata: {} });
    }
    if (url.pathname === '/1.0/network-acls' && req.method === 'POST') {
      const body = JSON.parse(req.body);
      if (acls.has(body.name)) {
        return sendIncusJson(res, 400, { type: 'error', error: 'The network ACL already exists' });
      }
      acls.set(body.name, body);
      return sendIncusJson(res, 200, { ...ok, metadata: {} });
    }
    if (acl && req.method === 'DELETE') {
      if (inUseDeletes > 0 && !acl.startsWith('svc-lock-')) {
        inUseDeletes -= 1;
        config['security.acls'] = [config['security.acls'], acl].filter(Boolean).join(',');
        return sendIncusJson(res, 500, {
          type: 'error',
          error: 'Cannot delete an ACL that is in use',
        });
      }
      acls.delete(acl);
      return sendIncusJson(res, 200, { ...ok, metadata: {} });
    }
    sendIncusJson(res, 404, { type: 'error', error: 'not found' });
  };
  const standIn = await startIncusStandIn(answer);
  const client = new IncusClient({ socketPath: standIn.socketPath, project: 'default' });
  return {
    config,
    acls,
    firewall: new IncusBridgeFirewall(client, 'incusbr0'),
    patches: () => patches,
    lockAttempts: () =>
      standIn.seen.filter((r) => r.method === 'POST' && r.body.includes('svc-lock-')).length,
    async close() {
      client.close();
      await standIn.close();
    },
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const attached = (config: Record<string, string>) => (config['security.acls'] ?? '').split(',');

describe('IncusBridgeFirewall', () => {
  it('attaches a machine’s ACL beside the others, unmatched traffic dropped both ways', async () => {
    const net = await standInNetwork({});
    close = net.close;
    await net.firewall.replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES);
    expect(net.config).toMatchObject({
      'security.acls': 'svc-other,svc-a',
      'security.acls.default.egress.action': 'drop',
      'security.acls.default.ingress.action': 'drop',
    });
    expect(await net.firewall.read('svc-a')).toEqual(DEFAULT_FIREWALL_RULES);
    expect(await net.firewall.read('svc-none')).toBeUndefined();
  });

  it('reads the list again after a stale ETag and keeps the other writer’s change', async () => {
    const net = await standInNetwork({ concurrentListAt: { patch: 1, list: 'svc-other,svc-b' } });
    close = net.close;
    await net.firewall.replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES);
    expect(attached(net.config)).toEqual(['svc-other', 'svc-b', 'svc-a']);
  });

  it('writes again when a read-back shows its change was undone by a concurrent writer', async () => {
    const net = await standInNetwork({ lostPatch: 1 });
    close = net.close;
    await net.firewall.replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES);
    expect(attached(net.config)).toEqual(['svc-other', 'svc-a']);
    expect(net.patches()).toBe(2);
  });

  it('reports no rules for an ACL that is not on the bridge (it enforces nothing)', async () => {
    const net = await standInNetwork({});
    close = net.close;
    await net.firewall.replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES);
    net.config['security.acls'] = 'svc-other';
    expect(await net.firewall.read('svc-a')).toEqual([]);
  });

  it('waits for the lock another process holds, and breaks one whose lease is over', async () => {
    const net = await standInNetwork({});
    close = net.close;
    const lock = (untilMs: number) => ({ config: { 'user.svc.lock-until': String(untilMs) } });
    net.acls.set('svc-lock-incusbr0', lock(Date.now() + 60_000));
    let isDone = false;
    const change = net.firewall
      .replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES)
      .then(() => {
        isDone = true;
      });
    // Tried again and again while held, without touching the bridge.
    await waitFor(() => net.lockAttempts() >= 3, 5_000, 'retries of the lock');
    expect(isDone).toBe(false);
    expect(net.patches()).toBe(0);
    net.acls.delete('svc-lock-incusbr0');
    await change;
    expect(attached(net.config)).toEqual(['svc-other', 'svc-a']);
    expect(net.acls.has('svc-lock-incusbr0')).toBe(false);

    net.acls.set('svc-lock-incusbr0', lock(Date.now() - 1));
    await net.firewall.remove('svc-a');
    expect(attached(net.config)).toEqual(['svc-other']);
    expect(net.acls.has('svc-lock-incusbr0')).toBe(false);
  });

  it('detaches and deletes again when the ACL was put back on the bridge meanwhile', async () => {
    const net = await standInNetwork({ inUseDeletes: 2 });
    close = net.close;
    await net.firewall.replace('svc-a', OWNER, '10.77.0.5', DEFAULT_FIREWALL_RULES);
    await net.firewall.remove('svc-a');
    expect(attached(net.config)).toEqual(['svc-other']);
    expect(net.acls.has('svc-a')).toBe(false);
    await net.firewall.remove('svc-a');
  });
});

describe('IncusBridgeFirewall on a cluster', () => {
  /** Two members; like Incus, without `target` a call answers for the member it reached. */
  const INTERFACES: Record<string, Record<string, string>> = {
    member1: { incusbr0: '10.77.0.1', eth0: '203.0.113.5' },
    member2: { incusbr0: '10.77.0.1', eth0: '203.0.113.6', eth1: '192.0.2.7' },
  };

  it('closes every member’s addresses to machines, not only the member it talks to', async () => {
    const standIn = await startIncusStandIn((req, res) => {
      const url = new URL(req.url, 'http://incus');
      const member = url.searchParams.get('target') ?? 'member1';
      const interfaces = INTERFACES[member];
      const state = url.pathname.match(/^\/1\.0\/networks\/([^/]+)\/state$/)?.[1];
      if (url.pathname === '/1.0/cluster/members') {
        const metadata = Object.keys(INTERFACES).map((name) => `/1.0/cluster/members/${name}`);
        return sendIncusJson(res, 200, { ...ok, metadata });
      }
      if (url.pathname === '/1.0/networks' && interfaces) {
        const metadata = Object.keys(interfaces).map((name) => `/1.0/networks/${name}`);
        return sendIncusJson(res, 200, { ...ok, metadata });
      }
      const address = state && interfaces?.[state];
      if (address) {
        const addresses = [
          { family: 'inet', address },
          { family: 'inet6', address: 'fe80::1' },
        ];
        return sendIncusJson(res, 200, { ...ok, metadata: { addresses } });
      }
      sendIncusJson(res, 404, { type: 'error', error: 'not found' });
    });
    const client = new IncusClient({ socketPath: standIn.socketPath, project: 'default' });
    close = async () => {
      client.close();
      await standIn.close();
    };
    const firewall = new IncusBridgeFirewall(client, 'incusbr0');
    firewall.isClustered = true;
    expect(await firewall.hostAddresses()).toEqual([
      '10.77.0.1',
      '192.0.2.7',
      '203.0.113.5',
      '203.0.113.6',
    ]);
  });
});
