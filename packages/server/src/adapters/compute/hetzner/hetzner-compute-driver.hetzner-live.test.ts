import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { keyPair, ssh } from '../../../../test/openssh.js';
import { waitFor } from '../../../../test/wait.js';
import { buildUserData } from '../cloud-init.js';
import { HetznerComputeDriver } from './hetzner-compute-driver.js';

// Opt in: `HCLOUD_TOKEN=… npm run test:hetzner-live` makes one real server in the token's
// project (the smallest type of the size table's small EU row, in hel1: cents), checks SSH and
// the firewall, stops, starts and deletes it. Never part of `npm test`; without a token it fails.

const token = process.env.HCLOUD_TOKEN;

describe('the hetzner driver on the real Hetzner Cloud', () => {
  const id = randomUUID();
  let dir = '';
  const driver = new HetznerComputeDriver(
    {
      endpoint: process.env.HCLOUD_ENDPOINT ?? 'https://api.hetzner.cloud/v1',
      token: token ?? '',
      locations: { us: 'hil', eu: 'hel1' },
      serverTypes: {},
      agentImage: 'debian-12',
      gatewaySources: ['0.0.0.0/0', '::/0'],
    },
    pino({ level: process.env.LOG_LEVEL ?? 'info' }),
  );
  afterAll(async () => {
    // Whatever happened above, nothing is left to bill.
    if (token) await driver.deleteServer(id);
    await rm(dir, { recursive: true, force: true });
  });

  it('makes, firewalls, stops, starts and deletes one server reachable over SSH', async () => {
    if (!token) throw new Error('HCLOUD_TOKEN is not set: this test runs against a real project');
    await driver.connect();
    dir = await mkdtemp(path.join(tmpdir(), 'svc-hetzner-live-'));
    const key = await keyPair(dir, 'live');
    const info = await driver.createServer({
      id,
      size: 'small',
      region: 'eu',
      image: 'debian-12',
      bootstrapEnv: {},
      labels: { managedBy: 'svc-live-test', kind: 'plain_vm' },
      userData: buildUserData({
        hostname: 'svc-live',
        defaultUser: 'debian',
        authorizedKeys: [key.publicLine],
      }),
      login: { user: 'debian', authorizedKeys: [key.publicLine] },
      firewall: DEFAULT_FIREWALL_RULES,
    });
    const host = info.ipv4 as string;
    const run = (command: string) => ssh(22, 'debian', key.file, command, host);
    await waitFor(async () => (await run('true')).code === 0, 300_000, 'SSH');
    expect((await run('hostname')).stdout).toBe('svc-live\n');

    await driver.setFirewall(id, [
      { direction: 'in', protocol: 'tcp', port: '80', sourceIps: ['0.0.0.0/0'], description: '' },
    ]);
    await waitFor(async () => (await run('true')).code === 255, 60_000, 'SSH cut');
    await driver.setFirewall(id, DEFAULT_FIREWALL_RULES);
    await waitFor(async () => (await run('true')).code === 0, 60_000, 'SSH back');

    await driver.powerOff(id);
    expect((await driver.getServer(id))?.status).toBe('off');
    await driver.powerOn(id);
    await waitFor(async () => (await run('true')).code === 0, 300_000, 'SSH after start');

    await driver.deleteServer(id);
    expect(await driver.getServer(id)).toBeUndefined();
    expect(await driver.listServers({ managedBy: 'svc-live-test' })).toEqual([]);
  });
});
