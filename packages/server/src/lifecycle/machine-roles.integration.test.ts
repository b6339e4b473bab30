import type { Role } from '@svc/contract';
import { activateSubscription, cloneAgent, createOrg } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const ROLES: readonly Role[] = ['owner', 'admin', 'member'];
const MAY_TAKE_OUT: Readonly<Record<Role, boolean>> = { owner: true, admin: true, member: false };

/** What differs between the two machine kinds in these requests. */
const KINDS = {
  agent: {
    path: '/api/agents',
    create: { size: 'small', region: 'eu', billingType: 'metered' },
  },
  'plain VM': {
    path: '/api/plain-vms',
    create: {
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
    },
  },
} as const;

describe.each(databaseKinds)('who may take a machine out of an organization, on %s', (kind) => {
  let t: TestContext;
  let sourceOrg: string;
  /** Per role: a client with that role in `sourceOrg`, its personal account and its own billed org. */
  const users = {} as Record<Role, { client: TestClient; personalId: string; ownOrg: string }>;
  let n = 0;

  const billedOrg = async (client: TestClient) => {
    n += 1;
    const id = (
      await client.call(createOrg, { body: { name: `Org ${n}`, slug: `roles-${kind}-${n}` } })
    ).body.id as string;
    expect((await client.call(activateSubscription, { params: { id } })).status).toBe(200);
    return id;
  };

  beforeAll(async () => {
    t = await createTestContext(kind, { env: { PROVISION_TIMEOUT_MS: '60000' } });
    for (const role of ROLES) {
      const client = t.newClient();
      const { user, account } = await signUpUser(client);
      users[role] = { client, personalId: account.id, ownOrg: await billedOrg(client) };
      if (role === 'owner') {
        sourceOrg = await billedOrg(client);
      } else {
        await joinOrganization(t, {
          owner: users.owner.client,
          orgId: sourceOrg,
          member: client,
          email: user.email,
          role,
        });
      }
    }
  });
  afterAll(() => t?.close());

  /** A running machine in the source organization, created by `role` (members create machines). */
  const runningMachine = async (machine: keyof typeof KINDS, role: Role) => {
    const { client } = users[role];
    const { path, create } = KINDS[machine];
    const res = await client.post(path, { name: `by-${role}`, accountId: sourceOrg, ...create });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    await waitFor(
      async () => (await client.get(`${path}/${id}`)).body.status === 'running',
      15_000,
      'running',
    );
    return id;
  };

  describe.each(Object.keys(KINDS) as (keyof typeof KINDS)[])('%s', (machine) => {
    it.each(ROLES)('transfer to another organization by the source’s %s', async (role) => {
      const id = await runningMachine(machine, role);
      const { client, ownOrg } = users[role];
      const path = `${KINDS[machine].path}/${id}`;
      const res = await client.post(`${path}/transfer`, { targetAccountId: ownOrg });
      if (MAY_TAKE_OUT[role]) {
        expect(res).toMatchObject({ status: 200, body: { id, accountId: ownOrg } });
      } else {
        expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
        expect((await client.get(path)).body).toMatchObject({ accountId: sourceOrg });
        // Operating it stays every member's right.
        expect((await client.post(`${path}/restart`)).status).toBe(200);
      }
    });
  });

  it.each(ROLES)('clone of an Agent into a personal account by the source’s %s', async (role) => {
    const id = await runningMachine('agent', role);
    const { client, personalId } = users[role];
    const clone = (accountId?: string) =>
      client.send(cloneAgent, {
        params: { id },
        body: {
          name: 'copy',
          size: 'small',
          billingType: 'metered',
          ...(accountId && { accountId }),
        },
      });
    const elsewhere = await clone(personalId);
    if (MAY_TAKE_OUT[role]) {
      expect(elsewhere).toMatchObject({ status: 201, body: { accountId: personalId } });
      return;
    }
    expect(elsewhere).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    const copies = await t.ctx.database.db
      .selectFrom('agents')
      .select('id')
      .where('cloneSourceId', '=', id)
      .execute();
    expect(copies).toEqual([]);
    // Within the source's own account a clone stays inside: members may make it.
    expect(await clone()).toMatchObject({ status: 201, body: { accountId: sourceOrg } });
  });
});
