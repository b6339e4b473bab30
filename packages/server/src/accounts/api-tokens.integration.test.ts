import {
  addVaultEntry,
  authorizeApp,
  changePassword,
  createAgent,
  createApiToken,
  createOrg,
  deleteMe,
  type EndpointCallInput,
  getConnectionToken,
  getMe,
  getSelfAgent,
  listAgents,
  listApiTokens,
  listAuditEvents,
  removeMember,
  revokeApiToken,
  signIn,
  updateMe,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization } from '../../test/mailed-links.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

/** Personal access tokens: what they may do as their user, and when they stop working. */
describe.each(databaseKinds)('personal access tokens on %s', (kind) => {
  let t: TestContext;

  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A signed-in user and a way to call as one of their tokens, like curl (no cookie, no Origin). */
  async function userWithTokens() {
    const browser = t.newClient();
    const { user, account } = await signUpUser(browser);
    const create = async (body: EndpointCallInput<typeof createApiToken>['body']) =>
      (await browser.call(createApiToken, { body })).body;
    const as = (token: string) =>
      t.newClient().withDefaults({ headers: { authorization: `Bearer ${token}` }, origin: null });
    return { browser, user, account, create, as };
  }

  const agentBody = {
    name: 'From CI',
    size: 'small',
    region: 'eu',
    billingType: 'metered',
  } as const;

  it('is shown once, stored hashed, and acts as its user on dashboard endpoints', async () => {
    const { browser, account, create, as } = await userWithTokens();
    const created = await create({ name: 'ci', scope: 'write' });
    expect(created.token).toMatch(/^svcp_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      name: 'ci',
      scope: 'write',
      expiresAt: null,
      lastUsedAt: null,
    });
    const stored = await t.ctx.database.db
      .selectFrom('apiTokens')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(created.token);

    const agent = await as(created.token).call(createAgent, { body: agentBody });
    expect(agent.body.accountId).toBe(account.id);
    const listed = await as(created.token).call(listAgents);
    expect(listed.body.map((a) => a.id)).toEqual([agent.body.id]);

    const tokens = await browser.call(listApiTokens);
    expect(tokens.body.tokens).toHaveLength(1);
    expect(tokens.body.tokens[0]?.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(tokens.body)).not.toContain(created.token);
  });

  it('is taken beside a session cookie without an Origin (a command-line client keeping cookies)', async () => {
    const { browser, create } = await userWithTokens();
    const { token } = await create({ name: 'cli', scope: 'write' });
    await browser.call(
      createAgent,
      { body: agentBody },
      { headers: { authorization: `Bearer ${token}` }, origin: null },
    );
    // Without the token, the same cookie-only request with no Origin stays refused (CSRF).
    expect(
      (await browser.callError(createAgent, { body: agentBody }, { origin: null })).status,
    ).toBe(403);
  });

  it('with the read scope reads only: 403 insufficient_scope on a change', async () => {
    const { create, as } = await userWithTokens();
    const { token } = await create({ name: 'dashboards', scope: 'read' });
    expect((await as(token).call(getMe)).status).toBe(200);
    const refused = await as(token).callError(createAgent, { body: agentBody });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
    expect((await as(token).call(listAgents)).body).toEqual([]);
    // A GET that hands out a provider's credential needs the write scope.
    const credential = await as(token).callError(getConnectionToken, {
      params: { id: crypto.randomUUID() },
    });
    expect(credential.status).toBe(403);
    expect(credential.body.error).toBe('insufficient_scope');
  });

  it('is never taken where a browser session is required', async () => {
    const { create, as } = await userWithTokens();
    const { token } = await create({ name: 'ci', scope: 'write' });
    // Minting tokens, changing the password, deleting the user, an OAuth consent.
    const script = as(token);
    expect(
      (await script.callError(createApiToken, { body: { name: 'x', scope: 'write' } })).status,
    ).toBe(401);
    expect(
      (
        await script.callError(changePassword, {
          body: { currentPassword: 'x', newPassword: 'y'.repeat(9) },
        })
      ).status,
    ).toBe(401);
    expect((await script.callError(deleteMe)).status).toBe(401);
    // Moving the e-mail would let a token reset the password through it.
    expect(
      (await script.callError(updateMe, { body: { email: 'thief@example.com' } })).status,
    ).toBe(401);
    expect(
      (await script.callError(authorizeApp, { query: { provider: 'suite', scopes: 'email' } }))
        .status,
    ).toBe(401);
    // An Agent's endpoint does not take it either.
    expect((await script.callError(getSelfAgent)).status).toBe(401);
  });

  it('stops working when revoked or expired', async () => {
    const { browser, create, as } = await userWithTokens();
    const revoked = await create({ name: 'old', scope: 'write' });
    expect((await browser.call(revokeApiToken, { params: { id: revoked.id } })).status).toBe(204);
    const after = await as(revoked.token).callError(getMe);
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('unauthorized');
    expect((await browser.callError(revokeApiToken, { params: { id: revoked.id } })).status).toBe(
      404,
    );

    const past = await browser.callError(createApiToken, {
      body: {
        name: 'past',
        scope: 'read',
        expiresAt: new Date(t.clock.now().getTime() - 1000).toISOString(),
      },
    });
    expect(past.status).toBe(400);
    const expiring = await create({
      name: 'a day',
      scope: 'read',
      expiresAt: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
    });
    expect((await as(expiring.token).call(getMe)).status).toBe(200);
    t.clock.advance(86_400_000 + 1000);
    expect((await as(expiring.token).callError(getMe)).status).toBe(401);
    expect((await browser.call(listApiTokens)).body.tokens).toEqual([]);

    // A made-up token, or another user's revoked one, is 401 like no token at all.
    expect((await as(`svcp_${'A'.repeat(43)}`).callError(getMe)).status).toBe(401);
    const audit = await browser.call(getMe);
    const personal = audit.body.accounts[0]?.id as string;
    const events = await browser.call(listAuditEvents, {
      params: { id: personal },
      query: { kind: 'token' },
    });
    expect(events.body.items.map((e) => e.action)).toEqual([
      'token.create',
      'token.revoke',
      'token.create',
    ]);
  });

  it("revoking another user's token is 404", async () => {
    const alice = await userWithTokens();
    const bob = await userWithTokens();
    const token = await alice.create({ name: 'mine', scope: 'write' });
    expect((await bob.browser.callError(revokeApiToken, { params: { id: token.id } })).status).toBe(
      404,
    );
    expect((await alice.as(token.token).call(getMe)).status).toBe(200);
  });
});

describe.each(databaseKinds)('deleting one’s account on %s', (kind) => {
  let t: TestContext;

  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is refused while the user alone owns an organization or has machines', async () => {
    const client = t.newClient();
    const { user } = await signUpUser(client);
    const org = await client.call(createOrg, {
      body: { name: 'Solo', slug: `solo-${Date.now()}` },
    });
    const refused = await client.callError(deleteMe);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('Solo');
    expect(
      (await client.callError(removeMember, { params: { id: org.body.id, userId: user.id } }))
        .status,
    ).toBe(409);

    // A second owner takes over; then a machine in the personal account stands in the way.
    const other = t.newClient();
    const { user: otherUser } = await signUpUser(other);
    await joinOrganization(t, {
      owner: client,
      orgId: org.body.id,
      member: other,
      email: otherUser.email,
      role: 'owner',
    });
    await client.call(createAgent, {
      body: { name: 'Mine', size: 'small', region: 'eu', billingType: 'metered' },
    });
    const withMachine = await client.callError(deleteMe);
    expect(withMachine.status).toBe(409);
    expect(withMachine.body.detail).toMatch(/1 Agent/);
    expect((await client.call(getMe)).status).toBe(200);
  });

  it('deletes the user and their personal account; their sessions and tokens end', async () => {
    const client = t.newClient();
    const { user, account } = await signUpUser(client);
    await client.call(addVaultEntry, {
      body: {
        type: 'ssh_key',
        label: 'laptop',
        value: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq0cH4mR6T9G1ZtB6D6LqGq3w3y1l0cXv5oFz0mX3uK',
      },
    });
    const token = (await client.call(createApiToken, { body: { name: 'ci', scope: 'write' } })).body
      .token;
    const deleted = await client.call(deleteMe);
    expect(deleted.status).toBe(204);
    expect((await client.callError(getMe)).status).toBe(401);
    const viaToken = await t
      .newClient()
      .callError(getMe, {}, { headers: { authorization: `Bearer ${token}` } });
    expect(viaToken.status).toBe(401);
    const signedIn = await t.newClient().callError(signIn, {
      body: { email: user.email, password: 'correct horse battery' },
    });
    expect(signedIn.status).toBe(401);
    const { db } = t.ctx.database;
    expect(
      await db.selectFrom('accounts').where('id', '=', account.id).selectAll().execute(),
    ).toEqual([]);
    // The address is free again.
    expect((await signUpUser(t.newClient(), { email: user.email })).user.email).toBe(user.email);
  });
});
