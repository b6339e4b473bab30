import type { AuditEvent, AuditLog, EndpointCallInput, Role } from '@svc/contract';
import {
  activateSubscription,
  changeMemberRole,
  createAgent,
  createOrg,
  deleteBundle,
  getAgent,
  listAuditEvents,
  listMembers,
  setAgentBilling,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClientOf, manifestOf, publishSimple } from '../../test/bundle-test-helpers.js';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

describe.each(databaseKinds)("members' roles and the audit log on %s", (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let admin: TestClient;
  let plain: TestClient;
  const ids = { owner: '', admin: '', plain: '', org: '', orgSlug: `audit-${kind}` };

  beforeAll(async () => {
    t = await createTestContext(kind);
    [owner, admin, plain] = [t.newClient(), t.newClient(), t.newClient()];
    ids.owner = (await signUpUser(owner)).user.id;
    const org = await owner.call(createOrg, { body: { name: 'Audit Org', slug: ids.orgSlug } });
    ids.org = org.body.id;
    for (const [client, key, role] of [
      [admin, 'admin', 'admin'],
      [plain, 'plain', 'member'],
    ] as const) {
      const { user } = await signUpUser(client);
      ids[key] = user.id;
      await joinOrganization(t, { owner, orgId: ids.org, member: client, email: user.email, role });
    }
  });
  afterAll(() => t?.close());

  const setRole = (as: TestClient, userId: string, role: Role) =>
    as.send(changeMemberRole, { params: { id: ids.org, userId }, body: { role } });
  const log = async (
    as: TestClient,
    query: EndpointCallInput<typeof listAuditEvents>['query'] = {},
  ): Promise<AuditLog> => (await as.call(listAuditEvents, { params: { id: ids.org }, query })).body;

  it('lets owners change any role and admins only non-owners; the last owner stays', async () => {
    expect((await setRole(admin, ids.plain, 'admin')).body).toMatchObject({ role: 'admin' });
    expect((await setRole(admin, ids.plain, 'member')).body).toMatchObject({ role: 'member' });
    expect((await setRole(admin, ids.plain, 'owner')).status).toBe(403);
    expect((await setRole(admin, ids.owner, 'admin')).status).toBe(403);
    expect((await setRole(plain, ids.admin, 'member')).status).toBe(403);
    expect((await setRole(owner, ids.owner, 'admin')).body).toMatchObject({ error: 'last_owner' });
    expect((await setRole(owner, ids.admin, 'owner')).body).toMatchObject({ role: 'owner' });
    expect((await setRole(owner, ids.owner, 'admin')).body).toMatchObject({ role: 'admin' });
    // Back as they were: the former admin, now the only owner, makes the first owner again.
    expect((await setRole(admin, ids.owner, 'owner')).status).toBe(200);
    expect((await setRole(owner, ids.admin, 'admin')).status).toBe(200);
    expect((await setRole(owner, crypto.randomUUID(), 'admin')).status).toBe(404);
    const stranger = t.newClient();
    await signUpUser(stranger);
    expect((await setRole(stranger, ids.plain, 'admin')).status).toBe(404);
    const roles = (await owner.call(listMembers, { params: { id: ids.org } })).body.members.map(
      (m: { userId: string; role: string }) => [m.userId, m.role],
    );
    expect(roles).toEqual(
      expect.arrayContaining([
        [ids.owner, 'owner'],
        [ids.admin, 'admin'],
        [ids.plain, 'member'],
      ]),
    );
  });

  it('records member, billing, machine and bundle changes, newest first, for owners and admins', async () => {
    expect((await owner.call(activateSubscription, { params: { id: ids.org } })).status).toBe(200);
    const agent = await admin.call(createAgent, {
      body: {
        name: 'Audited',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        accountId: ids.org,
      },
    });
    expect(agent.status).toBe(201);
    const running = async () =>
      (await admin.call(getAgent, { params: { id: agent.body.id } })).body.status;
    await waitFor(async () => (await running()) === 'running', 30_000, 'the Agent running');
    const billing = { billingType: 'subscription' as const };
    expect(
      (await admin.call(setAgentBilling, { params: { id: agent.body.id }, body: billing })).status,
    ).toBe(200);
    const publisher = agentClientOf(t, agent.body.id);
    await publishSimple(t, publisher, manifestOf('audited'));
    expect(
      (await owner.call(deleteBundle, { params: { accountSlug: ids.orgSlug, name: 'audited' } }))
        .status,
    ).toBe(204);

    const { items } = await log(owner, { limit: 100 });
    const actions = items.map((e) => e.action);
    expect(actions).toEqual([
      'bundle.delete',
      'bundle.publish',
      'agent.billing',
      'agent.create',
      'account.subscription',
      'member.role',
      'member.role',
      'member.role',
      'member.role',
      'member.role',
      'member.role',
      'invitation.accept',
      'invitation.create',
      'invitation.accept',
      'invitation.create',
    ]);
    const byAction = (action: string) => items.find((e) => e.action === action) as AuditEvent;
    expect(byAction('agent.billing')).toMatchObject({
      actor: { userId: ids.admin },
      resourceId: agent.body.id,
      data: { from: 'metered', to: 'subscription' },
    });
    expect(byAction('bundle.publish')).toMatchObject({
      actor: null,
      data: { name: 'audited', version: 1, agentId: agent.body.id },
    });
    expect(items.at(-1)).toMatchObject({ actor: { userId: ids.owner }, data: { role: 'admin' } });
    expect((await log(admin)).items.length).toBe(items.length);
    expect((await plain.callError(listAuditEvents, { params: { id: ids.org } })).status).toBe(403);
  });

  it('filters by kind or action and by actor, and pages without repeating or skipping', async () => {
    const all = (await log(owner, { limit: 100 })).items;
    const members = (await log(owner, { kind: 'member' })).items;
    expect(members.map((e) => e.action)).toEqual(
      all.filter((e) => e.action.startsWith('member.')).map((e) => e.action),
    );
    expect((await log(owner, { kind: 'invitation.accept' })).items).toHaveLength(2);
    expect((await log(owner, { kind: 'agent.create' })).items).toHaveLength(1);
    expect((await log(owner, { kind: 'memb' })).items).toEqual([]);
    const byAdmin = (await log(owner, { actor: ids.admin })).items;
    expect(byAdmin.length).toBeGreaterThan(0);
    expect(byAdmin.every((e) => e.actor?.userId === ids.admin)).toBe(true);

    const paged: AuditEvent[] = [];
    let cursor: string | null = null;
    do {
      const page: AuditLog = await log(owner, { limit: 3, ...(cursor && { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      paged.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));

    for (const query of [
      { cursor: 'nonsense' },
      { kind: 'Agent;drop' },
      { limit: 0 },
      { actor: 'x' },
    ]) {
      const res = await owner.callError(listAuditEvents, { params: { id: ids.org }, query });
      expect(res.status, JSON.stringify(query)).toBe(400);
    }
  });
});
