import {
  activateSubscription,
  addMember,
  createOrg,
  deactivateSubscription,
  getMe,
  listMembers,
  removeMember,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization, mailedLinkToken } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

describe.each(databaseKinds)('organizations, members and subscriptions on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  let n = 0;
  async function orgWithOwner() {
    const owner = t.newClient();
    const ownerUser = await signUpUser(owner);
    n += 1;
    const org = await owner.call(createOrg, {
      body: { name: `Org ${n}`, slug: `org-${kind}-${n}` },
    });
    expect(org.status).toBe(201);
    return { owner, ownerUser, org: org.body as { id: string; slug: string } };
  }
  async function member(owner: TestClient, orgId: string, role: 'owner' | 'admin' | 'member') {
    const client = t.newClient();
    const { user } = await signUpUser(client);
    await joinOrganization(t, { owner, orgId, member: client, email: user.email, role });
    return { client, user };
  }

  it('creates an organization with the caller as owner, listed in /api/me', async () => {
    const { owner, org } = await orgWithOwner();
    expect(org).toMatchObject({ kind: 'organization', role: 'owner', subscriptionActive: false });
    const me = await owner.call(getMe);
    expect(me.body.accounts.map((a: { id: string }) => a.id)).toContain(org.id);
    expect(me.body.accounts[0]?.kind).toBe('personal');
  });

  it('refuses a taken slug (409), including a personal account slug, and invalid or reserved ones (400)', async () => {
    const { owner, org } = await orgWithOwner();
    const taken = await owner.callError(createOrg, { body: { name: 'Again', slug: org.slug } });
    expect(taken).toMatchObject({ status: 409, body: { error: 'slug_taken' } });
    const personal = (await owner.call(getMe)).body.accounts[0]?.slug ?? '';
    expect((await owner.callError(createOrg, { body: { name: 'P', slug: personal } })).status).toBe(
      409,
    );
    for (const slug of ['-bad', 'Bad', 'a'.repeat(41), 'has_underscore', 'dashboard']) {
      const res = await owner.callError(createOrg, { body: { name: 'Bad', slug } });
      expect(res.status, slug).toBe(400);
      expect(res.body.issues?.[0]?.path).toEqual(['body', 'slug']);
    }
  });

  it('adds members by e-mail only through an invitation: the same answer with or without an account, nobody joins unasked', async () => {
    const { owner, org } = await orgWithOwner();
    const existing = t.newClient();
    const { user } = await signUpUser(existing);
    const withAccount = await owner.call(addMember, {
      params: { id: org.id },
      body: {
        email: user.email,
        role: 'member',
      },
    });
    const ghost = `ghost-${kind}-${n}@example.com`;
    const withoutAccount = await owner.call(addMember, {
      params: { id: org.id },
      body: {
        email: ghost,
        role: 'member',
      },
    });
    // The same status and the same shape: an invitation, whoever has the address.
    expect(withAccount.status).toBe(202);
    expect(withoutAccount.status).toBe(202);
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    expect(shape(withAccount.body)).toEqual(shape(withoutAccount.body));
    expect(withAccount.body).toMatchObject({ accountId: org.id, email: user.email });
    expect(withoutAccount.body).toMatchObject({ accountId: org.id, email: ghost });
    // Nobody joined: the existing user is not a member until they accept.
    const before = (await owner.call(listMembers, { params: { id: org.id } })).body.members;
    expect(before.map((m: { userId: string }) => m.userId)).not.toContain(user.id);
    expect((await existing.call(getMe)).body.accounts).toHaveLength(1);
    // Both addresses got the same mail: the invitation's link.
    await mailedLinkToken(t, ghost, 'invitation');
    await mailedLinkToken(t, user.email, 'invitation');
    await joinOrganization(t, {
      owner,
      orgId: org.id,
      member: existing,
      email: user.email,
      role: 'admin',
    });
    const after = (await owner.call(listMembers, { params: { id: org.id } })).body.members;
    expect(after.map((m: { userId: string; role: string }) => [m.userId, m.role])).toContainEqual([
      user.id,
      'admin',
    ]);
    expect(
      await owner.callError(addMember, {
        params: { id: org.id },
        body: { email: user.email, role: 'admin' },
      }),
    ).toMatchObject({
      status: 409,
      body: { error: 'already_member' },
    });
  });

  it('lets owners and admins manage members; members get 403; outsiders get 404', async () => {
    const { owner, org } = await orgWithOwner();
    const admin = await member(owner, org.id, 'admin');
    const plain = await member(owner, org.id, 'member');
    const outsider = t.newClient();
    const outsiderUser = await signUpUser(outsider);

    const byAdmin = await admin.client.call(addMember, {
      params: { id: org.id },
      body: {
        email: outsiderUser.user.email,
        role: 'member',
      },
    });
    expect(byAdmin.status).toBe(202);
    const newcomer = await signUpUser(t.newClient());
    // Only owners make owners.
    expect(
      (
        await admin.client.callError(addMember, {
          params: { id: org.id },
          body: {
            email: newcomer.user.email,
            role: 'owner',
          },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await plain.client.callError(addMember, {
          params: { id: org.id },
          body: {
            email: newcomer.user.email,
            role: 'member',
          },
        })
      ).status,
    ).toBe(403);
    const stranger = t.newClient();
    await signUpUser(stranger);
    expect(await stranger.callError(listMembers, { params: { id: org.id } })).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    expect(
      (
        await stranger.callError(addMember, {
          params: { id: org.id },
          body: {
            email: newcomer.user.email,
            role: 'member',
          },
        })
      ).status,
    ).toBe(404);
    expect(
      (await stranger.callError(activateSubscription, { params: { id: org.id } })).status,
    ).toBe(404);
    // A personal account is not an organization.
    const personal = (await owner.call(getMe)).body.accounts[0]?.id ?? '';
    expect((await owner.callError(listMembers, { params: { id: personal } })).status).toBe(404);
  });

  it('removes members: admins not owners, members only themselves, never the last owner', async () => {
    const { owner, ownerUser, org } = await orgWithOwner();
    const admin = await member(owner, org.id, 'admin');
    const a = await member(owner, org.id, 'member');
    const b = await member(owner, org.id, 'member');
    expect(
      (await a.client.callError(removeMember, { params: { id: org.id, userId: b.user.id } }))
        .status,
    ).toBe(403);
    expect(
      (
        await admin.client.callError(removeMember, {
          params: { id: org.id, userId: ownerUser.user.id },
        })
      ).status,
    ).toBe(403);
    expect(
      (await admin.client.call(removeMember, { params: { id: org.id, userId: b.user.id } })).status,
    ).toBe(204);
    expect(
      (await a.client.call(removeMember, { params: { id: org.id, userId: a.user.id } })).status,
    ).toBe(204);
    expect(
      await owner.callError(removeMember, { params: { id: org.id, userId: ownerUser.user.id } }),
    ).toMatchObject({
      status: 409,
      body: { error: 'last_owner' },
    });
    expect(
      (await owner.callError(removeMember, { params: { id: org.id, userId: b.user.id } })).status,
    ).toBe(404);
    const second = await member(owner, org.id, 'owner');
    expect(
      (
        await second.client.call(removeMember, {
          params: { id: org.id, userId: ownerUser.user.id },
        })
      ).status,
    ).toBe(204);
    const left = (await second.client.call(listMembers, { params: { id: org.id } })).body.members;
    expect(left.map((m: { userId: string }) => m.userId).sort()).toEqual(
      [admin.user.id, second.user.id].sort(),
    );
  });

  it('activates and deactivates a subscription (owners and admins only)', async () => {
    const { owner, org } = await orgWithOwner();
    const admin = await member(owner, org.id, 'admin');
    const plain = await member(owner, org.id, 'member');
    expect(await owner.call(activateSubscription, { params: { id: org.id } })).toMatchObject({
      status: 200,
      body: { accountId: org.id, subscriptionActive: true },
    });
    const me = await plain.client.call(getMe);
    expect(me.body.accounts.find((a: { id: string }) => a.id === org.id)?.subscriptionActive).toBe(
      true,
    );
    expect(
      (await plain.client.callError(deactivateSubscription, { params: { id: org.id } })).status,
    ).toBe(403);
    expect(
      await admin.client.call(deactivateSubscription, { params: { id: org.id } }),
    ).toMatchObject({
      status: 200,
      body: { subscriptionActive: false },
    });
  });

  it('answers 400 for a malformed id and 404 for an unknown one', async () => {
    const { owner } = await orgWithOwner();
    const bad = await owner.callError(listMembers, { params: { id: 'not-a-uuid' } });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(bad.body.issues?.[0]?.path).toEqual(['params', 'id']);
    expect(
      (await owner.callError(listMembers, { params: { id: crypto.randomUUID() } })).status,
    ).toBe(404);
  });
});
