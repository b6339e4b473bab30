import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  addVaultEntry,
  createPlainVm,
  deletePlainVm,
  type FirewallRuleInput,
  getPlainVm,
  getPlainVmFirewall,
  listOsImages,
  putPlainVmFirewall,
  restartPlainVm,
  startPlainVm,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, nameOf } from '../../test/incus.js';
import { keyPair, ssh } from '../../test/openssh.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';

// A Plain VM through the HTTP API on the real Incus daemon (`npm run test:incus`): the service
// builds its incus driver from the environment, as `COMPUTE_DRIVER=incus npm start` does.

const BRIDGE_HOST = '10.77.0.1/32';

describe.each(databaseKinds)('Plain VMs on Incus, %s', { timeout: 300_000 }, (kind) => {
  let t: TestContext;
  let client: TestClient;
  let dir: string;
  let key: { file: string; publicLine: string };
  let vmId: string | undefined;
  let project: Awaited<ReturnType<typeof createIncusProject>>;

  beforeAll(async () => {
    project = await createIncusProject();
    dir = await mkdtemp(path.join(tmpdir(), 'svc-incus-api-'));
    key = await keyPair(dir, 'laptop');
    t = await createTestContext(kind, {
      env: {
        COMPUTE_DRIVER: 'incus',
        INCUS_SOCKET,
        INCUS_PROJECT: project.name,
        INCUS_SIZE_FACTOR: '0.25',
      },
      // No stand-in: the context makes the driver the environment names.
      overrides: { compute: undefined },
    });
    client = t.newClient();
    await signUpUser(client);
  });

  afterAll(async () => {
    if (vmId) await t?.ctx.compute.deleteServer(vmId);
    await t?.close();
    await project?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const detail = async (id: string) => (await client.call(getPlainVm, { params: { id } })).body;

  it("offers the OS images with an image alias in the service's project (the default project's, shared)", async () => {
    const images = async () => {
      const res = await client.call(listOsImages);
      return new Map(res.body.map((i) => [i.key, i.available]));
    };
    const admin = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
    try {
      const aliases = (await admin.call<string[]>('GET', '/1.0/images/aliases')).map(nameOf);
      const offered = await images();
      expect(offered.get('debian-12')).toBe(true);
      expect([...offered].filter(([, available]) => available).map(([key]) => key)).toEqual(
        [...offered.keys()].filter((key) => aliases.includes(key)),
      );
      // An image the operator imports counts at once, and one removed stops counting. Its alias
      // is the test's own: the default project's aliases are every project's, and a shared name
      // (alma-10) would change what other tests running meanwhile see.
      const alias = `svc-t-${randomBytes(4).toString('hex')}`;
      const { target } = await admin.call<{ target: string }>(
        'GET',
        '/1.0/images/aliases/debian-12',
      );
      const bootable = async () => (await t.ctx.compute.bootableImages?.([alias]))?.has(alias);
      await admin.call('POST', '/1.0/images/aliases', { body: { name: alias, target } });
      try {
        expect(await bootable()).toBe(true);
      } finally {
        await admin.call('DELETE', `/1.0/images/aliases/${alias}`);
      }
      expect(await bootable()).toBe(false);
    } finally {
      admin.close();
    }
  });

  it('creates a debian-12 VM reachable over SSH as debian, behind the firewall the API sets', async () => {
    expect(t.ctx.compute.name).toBe('incus');
    const keyId = (
      await client.call(addVaultEntry, {
        body: { type: 'ssh_key', label: 'laptop', value: key.publicLine },
      })
    ).body.id;
    const created = await client.call(createPlainVm, {
      body: {
        name: 'svc-api-box',
        tier: 'small',
        region: 'eu',
        osImageKey: 'debian-12',
        billingType: 'metered',
        access: { passwordEnabled: false, vaultEntryIds: [keyId] },
      },
    });
    const id = created.body.id;
    const params = { id };
    vmId = id;
    const vm = await waitFor(
      async () => {
        const current = await detail(id);
        return ['running', 'error'].includes(current.status) && current;
      },
      90_000,
      'running',
    );
    expect(vm.status, `status reason: ${vm.statusReason}`).toBe('running');
    expect(vm.ssh?.port).toBe(22);
    expect(vm.ssh?.host).toMatch(/^10\.77\.0\.\d+$/);
    const host = vm.ssh?.host as string;
    const run = (command: string) => ssh(22, 'debian', key.file, command, host);
    await waitFor(async () => (await run('true')).code === 0, 60_000, 'ssh');
    expect(await run('hostname; whoami')).toEqual({ code: 0, stdout: 'svc-api-box\ndebian\n' });

    const put = (rules: FirewallRuleInput[]) =>
      client.call(putPlainVmFirewall, { params, body: { rules } });
    const webOnly = await put([{ protocol: 'tcp', port: 80, sourceIps: ['0.0.0.0/0'] }]);
    expect(webOnly.body.rules).toEqual([
      { direction: 'in', protocol: 'tcp', port: '80', sourceIps: ['0.0.0.0/0'], description: '' },
    ]);
    // Enforced within seconds (on a loaded host the bridge's rules lag the API's answer).
    await waitFor(async () => (await run('true')).code === 255, 30_000, 'SSH cut');

    // SSH from this host's bridge address only: the test is let in again.
    const fromHere = await put([{ protocol: 'tcp', port: '22', sourceIps: [BRIDGE_HOST] }]);
    expect(fromHere.body.rules).toEqual([
      { direction: 'in', protocol: 'tcp', port: '22', sourceIps: [BRIDGE_HOST], description: '' },
    ]);
    expect((await client.call(getPlainVmFirewall, { params })).body.rules).toEqual(
      fromHere.body.rules,
    );
    await waitFor(async () => (await run('true')).code === 0, 30_000, 'SSH back');
    expect(await run('hostname')).toEqual({ code: 0, stdout: 'svc-api-box\n' });

    // The lifecycle's moves on the real machine: each allowed one lands in its state and the
    // machine's power follows; a move its state does not allow is refused and changes nothing.
    const settle = (status: string) =>
      waitFor(async () => (await detail(id)).status === status, 90_000, status);
    const power = async () => (await t.ctx.compute.getServer(id))?.status;
    expect((await client.callError(startPlainVm, { params })).status).toBe(409);
    expect((await client.call(stopPlainVm, { params })).body.status).toBe('stopping');
    await settle('stopped');
    expect(await power()).toBe('off');
    expect((await client.callError(restartPlainVm, { params })).status).toBe(409);
    expect((await client.call(startPlainVm, { params })).body.status).toBe('starting');
    await settle('running');
    expect(await power()).toBe('running');
    await waitFor(async () => (await run('true')).code === 0, 60_000, 'ssh after start');
    expect((await run('touch /dev/shm/booted && echo ok')).stdout).toBe('ok\n');
    expect((await client.call(restartPlainVm, { params })).body.status).toBe('restarting');
    await settle('running');
    await waitFor(async () => (await run('true')).code === 0, 60_000, 'ssh after restart');
    expect((await run('test -e /dev/shm/booted || echo rebooted')).stdout).toBe('rebooted\n');

    expect((await client.call(deletePlainVm, { params })).body.status).toBe('destroying');
    await waitFor(async () => (await client.send(getPlainVm, { params })).status === 404, 60_000);
    expect(await t.ctx.compute.getServer(id)).toBeUndefined();
    expect(await t.ctx.compute.getFirewall(id)).toBeUndefined();
  });
});
