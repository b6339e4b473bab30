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
    const create = async (body: Record<string, unknown>) => {
      const res = await browser.post('/api/me/tokens', body);
      expect(res.status).toBe(201);
      return res.body as { id: string; token: string; scope: string; lastUsedAt: null };
    };
    const script = t.newClient();
    const as = (token: string) => ({
      get: (path: string) =>
        script.get(path, { headers: { authorization: `Bearer ${token}` }, origin: null }),
      post: (path: string, body?: unknown) =>
        script.post(path, body, { headers: { authorization: `Bearer ${token}` }, origin: null }),
      patch: (path: string, body?: unknown) =>
        script.patch(path, body, { headers: { authorization: `Bearer ${token}` }, origin: null }),
      delete: (path: string) =>
        script.delete(path, { headers: { authorization: `Bearer ${token}` }, origin: null }),
    });
    return { browser, user, account, create, as };
  }

  const agentBody = { name: 'From CI', size: 'small', region: 'eu', billingType: 'metered' };

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

    const agent = await as(created.token).post('/api/agents', agentBody);
    expect(agent.status).toBe(201);
    expect(agent.body.accountId).toBe(account.id);
    const listed = await as(created.token).get('/api/agents');
    expect(listed.body.map((a: { id: string }) => a.id)).toEqual([agent.body.id]);

    const tokens = await browser.get('/api/me/tokens');
    expect(tokens.body.tokens).toHaveLength(1);
    expect(tokens.body.tokens[0].lastUsedAt).not.toBeNull();
    expect(JSON.stringify(tokens.body)).not.toContain(created.token);
  });

  it('is taken beside a session cookie without an Origin (a command-line client keeping cookies)', async () => {
    const { browser, create } = await userWithTokens();
    const { token } = await create({ name: 'cli', scope: 'write' });
    const res = await browser.post('/api/agents', agentBody, {
      headers: { authorization: `Bearer ${token}` },
      origin: null,
    });
    expect(res.status).toBe(201);
    // Without the token, the same cookie-only request with no Origin stays refused (CSRF).
    expect((await browser.post('/api/agents', agentBody, { origin: null })).status).toBe(403);
  });

  it('with the read scope reads only: 403 insufficient_scope on a change', async () => {
    const { create, as } = await userWithTokens();
    const { token } = await create({ name: 'dashboards', scope: 'read' });
    expect((await as(token).get('/api/me')).status).toBe(200);
    const refused = await as(token).post('/api/agents', agentBody);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
    expect((await as(token).get('/api/agents')).body).toEqual([]);
    // A GET that hands out a provider's credential needs the write scope.
    const credential = await as(token).get(`/api/apps/${crypto.randomUUID()}/token`);
    expect(credential.status).toBe(403);
    expect(credential.body.error).toBe('insufficient_scope');
  });

  it('is never taken where a browser session is required', async () => {
    const { create, as } = await userWithTokens();
    const { token } = await create({ name: 'ci', scope: 'write' });
    // Minting tokens, changing the password, deleting the user, an OAuth consent.
    expect((await as(token).post('/api/me/tokens', { name: 'x', scope: 'write' })).status).toBe(
      401,
    );
    expect(
      (
        await as(token).post('/api/me/password', {
          currentPassword: 'x',
          newPassword: 'y'.repeat(9),
        })
      ).status,
    ).toBe(401);
    expect((await as(token).delete('/api/me')).status).toBe(401);
    // Moving the e-mail would let a token reset the password through it.
    expect((await as(token).patch('/api/me', { email: 'thief@example.com' })).status).toBe(401);
    expect((await as(token).get('/api/apps/authorize?provider=suite&scopes=email')).status).toBe(
      401,
    );
    // An Agent's endpoint does not take it either.
    expect((await as(token).get('/api/agent/self')).status).toBe(401);
  });

  it('stops working when revoked or expired', async () => {
    const { browser, create, as } = await userWithTokens();
    const revoked = await create({ name: 'old', scope: 'write' });
    expect((await browser.delete(`/api/me/tokens/${revoked.id}`)).status).toBe(204);
    const after = await as(revoked.token).get('/api/me');
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('unauthorized');
    expect((await browser.delete(`/api/me/tokens/${revoked.id}`)).status).toBe(404);

    const past = await browser.post('/api/me/tokens', {
      name: 'past',
      scope: 'read',
      expiresAt: new Date(t.clock.now().getTime() - 1000).toISOString(),
    });
    expect(past.status).toBe(400);
    const expiring = await create({
      name: 'a day',
      scope: 'read',
      expiresAt: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
    });
    expect((await as(expiring.token).get('/api/me')).status).toBe(200);
    t.clock.advance(86_400_000 + 1000);
    expect((await as(expiring.token).get('/api/me')).status).toBe(401);
    expect((await browser.get('/api/me/tokens')).body.tokens).toEqual([]);

    // A made-up token, or another user's revoked one, is 401 like no token at all.
    expect((await as(`svcp_${'A'.repeat(43)}`).get('/api/me')).status).toBe(401);
    const audit = await browser.get(`/api/me`);
    const personal = audit.body.accounts[0].id;
    const events = await browser.get(`/api/accounts/${personal}/audit?kind=token`);
    expect(events.body.items.map((e: { action: string }) => e.action)).toEqual([
      'token.create',
      'token.revoke',
      'token.create',
    ]);
  });

  it("revoking another user's token is 404", async () => {
    const alice = await userWithTokens();
    const bob = await userWithTokens();
    const token = await alice.create({ name: 'mine', scope: 'write' });
    expect((await bob.browser.delete(`/api/me/tokens/${token.id}`)).status).toBe(404);
    expect((await alice.as(token.token).get('/api/me')).status).toBe(200);
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
    const org = await client.post('/api/orgs', { name: 'Solo', slug: `solo-${Date.now()}` });
    const refused = await client.delete('/api/me');
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('Solo');
    expect((await client.delete(`/api/orgs/${org.body.id}/members/${user.id}`)).status).toBe(409);

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
    const agent = await client.post('/api/agents', {
      name: 'Mine',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
    });
    expect(agent.status).toBe(201);
    const withMachine = await client.delete('/api/me');
    expect(withMachine.status).toBe(409);
    expect(withMachine.body.detail).toMatch(/1 Agent/);
    expect((await client.get('/api/me')).status).toBe(200);
  });

  it('deletes the user and their personal account; their sessions and tokens end', async () => {
    const client = t.newClient();
    const { user, account } = await signUpUser(client);
    const key = await client.post('/api/vault', {
      type: 'ssh_key',
      label: 'laptop',
      value: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq0cH4mR6T9G1ZtB6D6LqGq3w3y1l0cXv5oFz0mX3uK',
    });
    expect(key.status).toBe(201);
    const token = (await client.post('/api/me/tokens', { name: 'ci', scope: 'write' })).body.token;
    const deleted = await client.delete('/api/me');
    expect(deleted.status).toBe(204);
    expect((await client.get('/api/me')).status).toBe(401);
    const viaToken = await t
      .newClient()
      .get('/api/me', { headers: { authorization: `Bearer ${token}` } });
    expect(viaToken.status).toBe(401);
    const signIn = await t
      .newClient()
      .post('/api/auth/sign-in', { email: user.email, password: 'correct horse battery' });
    expect(signIn.status).toBe(401);
    const { db } = t.ctx.database;
    expect(
      await db.selectFrom('accounts').where('id', '=', account.id).selectAll().execute(),
    ).toEqual([]);
    // The address is free again.
    expect((await signUpUser(t.newClient(), { email: user.email })).user.email).toBe(user.email);
  });
});
