import {
  addVaultEntry,
  createPlainVm,
  DEFAULT_FIREWALL_RULES,
  deletePlainVm,
  type EndpointCallInput,
  type FirewallRule,
  type FirewallRuleInput,
  getPlainVm,
  getPlainVmFirewall,
  listOsImages,
  listPlainVms,
  type PlainVm,
  putPlainVmFirewall,
  restartPlainVm,
  startPlainVm,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { ComputeFailure } from '../adapters/compute/compute-driver.js';

type CreateBody = EndpointCallInput<typeof createPlainVm>['body'];

const KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICq82nFuGMzbOcb434FU+SqoSXIEywKdzfSUHZZgm2A5 laptop';

describe.each(databaseKinds)('Plain VMs on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  let keyId: string;
  let accountId: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    client = t.newClient();
    accountId = (await signUpUser(client)).account.id;
    keyId = (
      await client.call(addVaultEntry, { body: { type: 'ssh_key', label: 'laptop', value: KEY } })
    ).body.id;
  });
  afterAll(() => t?.close());

  const body = (overrides: Partial<CreateBody> = {}): CreateBody => ({
    name: 'web-1',
    tier: 'small',
    region: 'eu',
    osImageKey: 'debian-12',
    billingType: 'metered',
    access: { passwordEnabled: false, vaultEntryIds: [keyId] },
    ...overrides,
  });
  const status = async (id: string) =>
    (await client.call(getPlainVm, { params: { id } })).body.status;
  const reach = (id: string, state: string) =>
    waitFor(async () => (await status(id)) === state, 15_000, state);
  const count = async () =>
    Number(
      (
        await t.ctx.database.db
          .selectFrom('plainVms')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('creates a VM in provisioning (201) that becomes running, with its SSH endpoint and default user', async () => {
    const res = await client.call(createPlainVm, { body: body() });
    expect(res.body).toMatchObject({
      accountId,
      name: 'web-1',
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      status: 'provisioning',
      access: { passwordEnabled: false, vaultEntryIds: [keyId] },
      defaultUser: 'debian',
      ipv4: null,
      ssh: null,
      specs: { vcpu: 2, ramGb: 4, diskGb: 80 },
    });
    expect(res.body).not.toHaveProperty('initialPassword');
    const vm = res.body;
    await reach(vm.id, 'running');
    const detail = (await client.call(getPlainVm, { params: { id: vm.id } })).body;
    expect(detail.ssh).toEqual({ host: '192.0.2.10', port: 22 });
    expect(detail.ipv4).toBe('192.0.2.10');

    // What the driver was asked for: the image, the key, the firewall and the cloud-init document.
    const spec = t.compute.servers.get(vm.id)?.spec;
    expect(spec).toMatchObject({
      image: 'debian-12',
      login: { user: 'debian', authorizedKeys: [KEY.split(' ').slice(0, 2).join(' ')] },
      firewall: DEFAULT_FIREWALL_RULES,
    });
    expect(spec?.userData).toMatch(/^#cloud-config\n/);
    expect(spec?.userData).toContain('hostname: web-1');
    expect((await client.call(listPlainVms)).body.map((v) => v.id)).toContain(vm.id);
  });

  it('hands out the one-time password once: in the create answer, never in the detail, only its hash kept until provisioned', async () => {
    const res = await client.call(createPlainVm, {
      body: body({
        name: 'pw',
        osImageKey: 'fedora-43',
        access: { passwordEnabled: true, vaultEntryIds: [] },
      }),
    });
    expect(res.body.initialPassword).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(res.body.defaultUser).toBe('root');
    const password = res.body.initialPassword as string;
    const row = await t.ctx.database.db
      .selectFrom('plainVms')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(password);
    await reach(res.body.id, 'running');
    const detail = await client.call(getPlainVm, { params: { id: res.body.id } });
    expect(JSON.stringify(detail.body)).not.toContain(password);
    expect(detail.body).not.toHaveProperty('initialPassword');
    expect(t.compute.servers.get(res.body.id)?.spec.login?.passwordHash).toMatch(/^\$6\$/);
    const after = await t.ctx.database.db
      .selectFrom('plainVms')
      .select('passwordHash')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(after.passwordHash).toBeNull();
    expect(t.logs.text()).not.toContain(password);
  });

  it.each([
    ['an unknown image', { osImageKey: 'windows-11' }, ['body', 'osImageKey']],
    ['a name that is not a hostname label', { name: 'Web_1' }, ['body', 'name']],
    ['a name ending in a hyphen', { name: 'web-' }, ['body', 'name']],
    ['a name of 64 characters', { name: 'a'.repeat(64) }, ['body', 'name']],
    [
      'no access method',
      { access: { passwordEnabled: false, vaultEntryIds: [] } },
      ['body', 'access'],
    ],
    [
      'an unknown Vault id',
      {
        access: { passwordEnabled: false, vaultEntryIds: ['00000000-0000-4000-8000-000000000000'] },
      },
      ['body', 'access', 'vaultEntryIds', 0],
    ],
    ['an unknown tier', { tier: 'huge' }, ['body', 'tier']],
  ])('refuses %s with 400 and stores nothing', async (_, overrides, path) => {
    const before = await count();
    // Each body is refused on purpose: the cast lets a value the contract's types exclude through.
    const res = await client.callError(createPlainVm, {
      body: body(overrides as Partial<CreateBody>),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.issues?.map((i) => i.path)).toContainEqual(path);
    expect(await count()).toBe(before);
  });

  it("refuses another account's Vault key (400) and hides another account's VM (404)", async () => {
    const other = t.newClient();
    await signUpUser(other);
    const res = await other.callError(createPlainVm, { body: body() });
    expect(res.status).toBe(400);
    expect(res.body.issues?.[0]?.path).toEqual(['body', 'access', 'vaultEntryIds', 0]);
    const mine = (await client.call(listPlainVms)).body[0] as PlainVm;
    const params = { id: mine.id };
    for (const call of [
      other.callError(getPlainVm, { params }),
      other.callError(stopPlainVm, { params }),
      other.callError(getPlainVmFirewall, { params }),
      other.callError(putPlainVmFirewall, { params, body: { rules: [] } }),
    ]) {
      expect(await call).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
  });

  it('keeps the firewall: the default rule, a PUT answered with what the provider reports, invalid PUTs changing nothing', async () => {
    // Held in provisioning while the PUT is refused: the job is woken at once on commit, and the
    // VM was sometimes running by the time the PUT arrived.
    t.compute.behave('createServer', { hang: true });
    const vm = (await client.call(createPlainVm, { body: body({ name: 'fw' }) })).body;
    const params = { id: vm.id };
    expect(
      (await client.callError(putPlainVmFirewall, { params, body: { rules: [] } })).status,
    ).toBe(409);
    t.compute.behave('createServer', {});
    t.compute.release();
    await reach(vm.id, 'running');
    expect((await client.call(getPlainVmFirewall, { params })).body).toEqual({
      rules: DEFAULT_FIREWALL_RULES,
    });

    const put = await client.call(putPlainVmFirewall, {
      params,
      body: {
        rules: [
          { protocol: 'tcp', port: 22, sourceIps: ['203.0.113.7', '2001:DB8::1/64'] },
          {
            direction: 'in',
            protocol: 'udp',
            port: '60000-61000',
            sourceIps: ['0.0.0.0/0'],
            description: 'mosh',
          },
        ],
      },
    });
    const expected: FirewallRule[] = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '22',
        sourceIps: ['203.0.113.7/32', '2001:db8::/64'],
        description: '',
      },
      {
        direction: 'in',
        protocol: 'udp',
        port: '60000-61000',
        sourceIps: ['0.0.0.0/0'],
        description: 'mosh',
      },
    ];
    expect(put.body).toMatchObject({ rules: expected });
    expect(t.compute.servers.get(vm.id)?.firewall).toEqual(expected);

    expect((await client.call(getPlainVmFirewall, { params })).body.rules).toEqual(expected);

    // Refused on purpose: the cast lets a protocol the contract's types exclude through.
    const bad = await client.callError(putPlainVmFirewall, {
      params,
      body: {
        rules: [
          { protocol: 'tcp', port: 22, sourceIps: ['0.0.0.0/0'] },
          { protocol: 'icmp', port: 1, sourceIps: ['0.0.0.0/0'] },
          { protocol: 'tcp', port: '90-80', sourceIps: ['10.0.0.0/33'] },
        ] as FirewallRuleInput[],
      },
    });
    expect(bad.status).toBe(400);
    const paths = bad.body.issues?.map((i) => i.path.slice(0, 4).join('.'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'body.rules.1.protocol',
        'body.rules.2.port',
        'body.rules.2.sourceIps',
      ]),
    );
    const tooMany = Array.from({ length: 51 }, (_, i) => ({
      protocol: 'tcp' as const,
      port: 1000 + i,
      sourceIps: ['0.0.0.0/0'],
    }));
    expect(
      (await client.callError(putPlainVmFirewall, { params, body: { rules: tooMany } })).status,
    ).toBe(400);
    expect(t.compute.servers.get(vm.id)?.firewall).toEqual(expected);
    expect((await client.call(getPlainVmFirewall, { params })).body.rules).toEqual(expected);
    await client.call(putPlainVmFirewall, { params, body: { rules: tooMany.slice(0, 50) } });
  });

  it('restarts only when running (409 otherwise), and destroy ends billing and removes the VM (then 404)', async () => {
    // Held in provisioning while the restart is refused: the job is woken at once on commit.
    t.compute.behave('createServer', { hang: true });
    const vm = (await client.call(createPlainVm, { body: body({ name: 'life' }) })).body;
    const params = { id: vm.id };
    expect((await client.callError(restartPlainVm, { params })).status).toBe(409);
    t.compute.behave('createServer', {});
    t.compute.release();
    await reach(vm.id, 'running');
    expect((await client.call(stopPlainVm, { params })).body.status).toBe('stopping');
    await reach(vm.id, 'stopped');
    expect(await client.callError(restartPlainVm, { params })).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    await client.call(startPlainVm, { params });
    await reach(vm.id, 'running');
    expect((await client.call(restartPlainVm, { params })).body.status).toBe('restarting');
    await reach(vm.id, 'running');
    expect((await client.call(deletePlainVm, { params })).body.status).toBe('destroying');
    await waitFor(async () => (await client.send(getPlainVm, { params })).status === 404);
    expect(t.compute.servers.has(vm.id)).toBe(false);
    const periods = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .select(['state', 'endedAt'])
      .where('resourceId', '=', vm.id)
      .orderBy('seq')
      .execute();
    expect(periods.map((p) => p.state)).toEqual([
      'provisioning',
      'running',
      'stopping',
      'stopped',
      'starting',
      'running',
      'restarting',
      'running',
      'destroying',
    ]);
    expect(periods.every((p) => p.endedAt !== null)).toBe(true);
  });

  it('fails at once with image_unavailable when the driver has no such image, and removes what it made', async () => {
    t.compute.behave('createServer', {
      failTimes: 1,
      failWith: () => new ComputeFailure('image_unavailable', 'no image alias "debian-12"'),
    });
    try {
      const created = await client.call(createPlainVm, { body: body({ name: 'no-image' }) });
      const id = created.body.id;
      await reach(id, 'error');
      expect((await client.call(getPlainVm, { params: { id } })).body.statusReason).toBe(
        'image_unavailable',
      );
      // Not tried again (it could not pass), and nothing of it is left at the provider.
      const calls = t.compute.calls.filter((c) => c.id === id).map((c) => c.call);
      expect(calls.filter((c) => c === 'createServer')).toHaveLength(1);
      expect(calls).toContain('deleteServer');
    } finally {
      t.compute.behave('createServer', {});
    }
  });

  it('lists the OS images with their default users, each available on a driver that boots all', async () => {
    const res = await client.call(listOsImages);
    expect(res.body).toHaveLength(7);
    expect(res.body).toContainEqual({
      key: 'rocky-10',
      displayName: 'Rocky Linux 10',
      defaultUser: 'root',
      available: true,
    });
  });

  it('lists every OS image unavailable, not a 500, while the driver cannot say which it has', async () => {
    const bootableImages = t.compute.bootableImages;
    t.compute.bootableImages = () => Promise.reject(new Error('the Incus socket refused'));
    try {
      const images = (await client.call(listOsImages)).body;
      expect(images).toHaveLength(7);
      expect(images.filter((image) => image.available)).toEqual([]);
    } finally {
      t.compute.bootableImages = bootableImages;
    }
    expect((await client.call(listOsImages)).body).toContainEqual(
      expect.objectContaining({ key: 'debian-12', available: true }),
    );
  });
});
