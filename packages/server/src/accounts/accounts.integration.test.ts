import { getMe, SESSION_COOKIE, signIn, signOut, signUp } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { SESSION_TTL_MS } from './sessions.js';

describe.each(databaseKinds)('sign-in and sessions on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  it('signs up: 201 with user and personal account, and an HttpOnly SameSite=Lax cookie', async () => {
    const client = t.newClient();
    const res = await client.call(signUp, {
      body: {
        email: '  Grace.Hopper+x@Example.com ',
        password: 'correct horse battery',
        name: 'Grace',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email: 'grace.hopper+x@example.com', name: 'Grace' });
    expect(res.body.account).toMatchObject({
      slug: 'grace-hopper-x',
      kind: 'personal',
      role: 'owner',
      subscriptionActive: false,
    });
    expect(res.body.user.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const me = await client.call(getMe);
    expect(me.status).toBe(200);
    expect(me.body.accounts).toEqual([res.body.account]);
  });

  it('makes personal slugs unique and keeps clear of reserved words', async () => {
    const a = await signUpUser(t.newClient(), { email: 'twin@a.example' });
    const b = await signUpUser(t.newClient(), { email: 'twin@b.example' });
    const c = await signUpUser(t.newClient(), { email: 'api@c.example' });
    expect([a.account.slug, b.account.slug, c.account.slug]).toEqual(['twin', 'twin-2', 'api-2']);
  });

  it('refuses a duplicate e-mail with 409 and writes nothing', async () => {
    await signUpUser(t.newClient(), { email: 'dup@example.com' });
    const res = await t.newClient().callError(signUp, {
      body: {
        email: 'DUP@example.com',
        password: 'another password',
        name: 'Dup',
      },
    });
    expect(res).toMatchObject({ status: 409, body: { error: 'email_taken' } });
    const users = await t.ctx.database.db
      .selectFrom('users')
      .select('email')
      .where('email', '=', 'dup@example.com')
      .execute();
    expect(users).toHaveLength(1);
  });

  it('answers invalid bodies with 400 invalid_request and issues', async () => {
    // A raw path: the body leaves out a field the contract's types require.
    const res = await t
      .newClient()
      .post('/api/auth/sign-up', { email: 'not-an-email', password: 'short' });
    expect(res.status).toBe(400);
    const { error, issues = [] } = errorOf(res);
    expect(error).toBe('invalid_request');
    const paths = issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['body.email', 'body.password', 'body.name']));
    for (const issue of issues)
      expect(issue).toMatchObject({ message: expect.any(String), code: expect.any(String) });
  });

  it('answers malformed JSON and a wrong content type with 400', async () => {
    const client = t.newClient();
    const bad = await client.request('POST', '/api/auth/sign-in', {
      rawBody: '{"email":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const form = await client.request('POST', '/api/auth/sign-in', {
      rawBody: 'email=a@b.c',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('signs in, and answers a wrong password and an unknown e-mail alike', async () => {
    const { user } = await signUpUser(t.newClient(), { email: 'signin@example.com' });
    const client = t.newClient();
    const ok = await client.call(signIn, {
      body: {
        email: 'SignIn@example.com',
        password: 'correct horse battery',
      },
    });
    expect(ok).toMatchObject({ status: 200, body: { user: { id: user.id } } });
    expect(client.cookies.has(SESSION_COOKIE)).toBe(true);
    const wrong = await t
      .newClient()
      .callError(signIn, { body: { email: 'signin@example.com', password: 'nope nope' } });
    const unknown = await t
      .newClient()
      .callError(signIn, { body: { email: 'nobody@example.com', password: 'nope nope' } });
    expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_credentials' } });
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.body).toEqual(wrong.body);
  });

  it('signs out: 204, the session ends and the cookie is cleared', async () => {
    const client = t.newClient();
    await signUpUser(client);
    const out = await client.call(signOut);
    expect(out.status).toBe(204);
    expect(client.cookies.has(SESSION_COOKIE)).toBe(false);
    expect((await client.callError(getMe)).status).toBe(401);
  });

  it('a signed-out session id no longer works even if replayed', async () => {
    const client = t.newClient();
    await signUpUser(client);
    const stolen = client.cookies.get(SESSION_COOKIE);
    await client.call(signOut);
    const replay = await t
      .newClient()
      .callError(getMe, {}, { headers: { cookie: `${SESSION_COOKIE}=${stolen}` } });
    expect(replay).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it('answers 401 without a cookie or with a forged one', async () => {
    expect(await t.newClient().callError(getMe)).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
    const forged = await t
      .newClient()
      .callError(getMe, {}, { headers: { cookie: `${SESSION_COOKIE}=forged` } });
    expect(forged.status).toBe(401);
  });

  it('stores only a hash of the session id', async () => {
    const client = t.newClient();
    const { user } = await signUpUser(client);
    const sessionId = client.cookies.get(SESSION_COOKIE) as string;
    const rows = await t.ctx.database.db
      .selectFrom('sessions')
      .selectAll()
      .where('userId', '=', user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(sessionId);
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('expires sessions after their lifetime and extends them when used past half of it', async () => {
    const client = t.newClient();
    await signUpUser(client);
    t.clock.advance(SESSION_TTL_MS * 0.6);
    expect((await client.call(getMe)).status).toBe(200); // extended here
    t.clock.advance(SESSION_TTL_MS * 0.6);
    expect((await client.call(getMe)).status).toBe(200);
    t.clock.advance(SESSION_TTL_MS + 1000);
    expect((await client.callError(getMe)).status).toBe(401);
  });
});

describe.each(databaseKinds)('sessions behind HTTPS on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind, { env: { PUBLIC_URL: 'https://svc.example' } });
  });
  afterAll(() => t?.close());

  it('uses a Secure __Host- cookie, which sibling subdomains cannot set, and signs out with it', async () => {
    const client = t.newClient();
    const res = await client.call(signUp, {
      body: {
        email: 'secure@example.com',
        password: 'correct horse battery',
        name: 'Secure',
      },
    });
    const cookie = res.headers
      .getSetCookie()
      .find((c) => c.startsWith(`__Host-${SESSION_COOKIE}=`));
    expect(cookie).toMatch(/; Path=\/; .*HttpOnly; Secure; SameSite=Lax/);
    expect(cookie).not.toMatch(/Domain=/);
    expect((await client.call(getMe)).status).toBe(200);
    // The unprefixed name means nothing here: a planted cookie is not a session.
    const planted = t.newClient();
    planted.cookies.set(SESSION_COOKIE, client.cookies.get(`__Host-${SESSION_COOKIE}`) as string);
    expect((await planted.callError(getMe)).status).toBe(401);
    expect((await client.call(signOut)).status).toBe(204);
    expect((await client.callError(getMe)).status).toBe(401);
  });
});
