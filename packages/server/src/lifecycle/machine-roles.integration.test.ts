import type { Role } from '@svc/contract';
import {
  activateSubscription,
  cloneAgent,
  createAgent,
  createOrg,
  createPlainVm,
  getAgent,
  getPlainVm,
  restartAgent,
  restartPlainVm,
  transferAgent,
  transferPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization } from '../../test/mailed-links.js';
import { plainVmBody } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const ROLES: readonly Role[] = ['owner', 'admin', 'member'];
const MAY_TAKE_OUT: Readonly<Record<Role, boolean>> = { owner: true, admin: true, member: false };

/** What differs between the two machine kinds in these requests: their endpoints. */
const KINDS = {
  agent: {
    create: (client: TestClient, name: string, accountId: string) =>
      client.call(createAgent, {
        body: { name, accountId, size: 'small', region: 'eu', billingType: 'metered' },
      }),
    detail: getAgent,
    transfer: transferAgent,
    restart: restartAgent,
  },
  'plain VM': {
    create: (client: TestClient, name: string, accountId: string) =>
      client.call(createPlainVm, { body: { ...plainVmBody(name), accountId } }),
    detail: getPlainVm,
    transfer: transferPlainVm,
    restart: restartPlainVm,
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
    ).body.id;
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
    const { create, detail } = KINDS[machine];
    const { id } = (await create(client, `by-${role}`, sourceOrg)).body;
    await waitFor(
      async () => (await client.call(detail, { params: { id } })).body.status === 'running',
      15_000,
      'running',
    );
    return id;
  };

  describe.each(Object.keys(KINDS) as (keyof typeof KINDS)[])('%s', (machine) => {
    it.each(ROLES)('transfer to another organization by the source’s %s', async (role) => {
      const id = await runningMachine(machine, role);
      const { client, ownOrg } = users[role];
      const { detail, transfer, restart } = KINDS[machine];
      const params = { id };
      const res = await client.send(transfer, { params, body: { targetAccountId: ownOrg } });
      if (MAY_TAKE_OUT[role]) {
        expect(res).toMatchObject({ status: 200, body: { id, accountId: ownOrg } });
      } else {
        expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
        expect((await client.call(detail, { params })).body).toMatchObject({
          accountId: sourceOrg,
        });
        // Operating it stays every member's right.
        expect((await client.call(restart, { params })).status).toBe(200);
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
