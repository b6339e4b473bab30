import {
  createOrg,
  getAgent,
  getMe,
  healthz,
  openapi,
  readyz,
  SESSION_COOKIE,
  signIn,
  signOut,
  signUp,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signUpUser, type TestContext } from '../test/test-context.js';
import { databaseKinds } from '../test/test-db.js';
import { MAX_BODY_BYTES } from './app.js';

describe.each(databaseKinds)('HTTP rules everywhere on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  it('answers unknown routes with 404 in the envelope', async () => {
    for (const path of ['/api/nope', '/nope', '/api/orgs/x/y/z']) {
      expect(await t.client.get(path)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
  });

  it('answers bodies over 1 MiB with 413 and writes nothing', async () => {
    const before = await t.ctx.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const res = await t.newClient().request('POST', '/api/auth/sign-up', {
      rawBody: JSON.stringify({
        email: 'big@example.com',
        password: 'x'.repeat(MAX_BODY_BYTES),
        name: 'Big',
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    const after = await t.ctx.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('sets a request id on every answer, and keeps a well-formed one the client sent', async () => {
    const res = await t.client.call(healthz);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await t.client.call(healthz, {}, { headers: { 'x-request-id': 'trace-123' } });
    expect(mine.headers.get('x-request-id')).toBe('trace-123');
  });

  it('sends security headers', async () => {
    const res = await t.client.call(healthz);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBeTruthy();
  });

  it('refuses a cross-origin cookie-authenticated POST; the same request from the dashboard origin passes', async () => {
    const client = t.newClient();
    await signUpUser(client);
    const body = { name: 'Csrf Org', slug: `csrf-${kind}` };
    const evil = await client.callError(createOrg, { body }, { origin: 'https://evil.example' });
    expect(evil).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    const noOrigin = await client.callError(createOrg, { body }, { origin: null });
    expect(noOrigin.status).toBe(403);
    const crossSite = await client.callError(
      createOrg,
      { body },
      { origin: null, headers: { 'sec-fetch-site': 'cross-site' } },
    );
    expect(crossSite.status).toBe(403);
    expect((await client.call(getMe)).body.accounts).toHaveLength(1);
    await client.call(createOrg, { body });
    await client.call(
      createOrg,
      { body: { ...body, slug: `csrf2-${kind}` } },
      { origin: null, headers: { 'sec-fetch-site': 'same-origin' } },
    );
  });

  it('lets clients without cookies (curl, CLI) sign in without an Origin', async () => {
    await signUpUser(t.newClient(), { email: 'curl@example.com' });
    const res = await t
      .newClient()
      .call(
        signIn,
        { body: { email: 'curl@example.com', password: 'correct horse battery' } },
        { origin: null },
      );
    expect(res.status).toBe(200);
  });

  it('logs sign-up, sign-in and a failed sign-in without passwords or session ids', async () => {
    t.logs.lines.length = 0;
    const client = t.newClient();
    const password = 'Very-Secret-Password-42';
    await client.call(signUp, {
      body: { email: 'logged@example.com', password, name: 'Logged' },
    });
    const first = client.cookies.get(SESSION_COOKIE) as string;
    await client.call(signIn, { body: { email: 'logged@example.com', password } });
    const second = client.cookies.get(SESSION_COOKIE) as string;
    await t.newClient().callError(signIn, {
      body: { email: 'logged@example.com', password: `${password}-wrong` },
    });
    const text = t.logs.text();
    const paths = t.logs.entries().map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/api/auth/sign-up', '/api/auth/sign-in']));
    expect(t.logs.entries().some((e) => e.status === 401)).toBe(true);
    for (const secret of [password, first, second]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(text).not.toContain(secret);
    }
  });

  it('logs health checks and successful reads (polling) at debug, changes and refusals at info', async () => {
    t.logs.lines.length = 0;
    await t.client.call(healthz);
    await t.client.call(readyz);
    await t.client.call(openapi);
    await t.client.callError(getAgent, {
      params: { id: '00000000-0000-4000-8000-000000000000' },
    });
    await t.client.call(signOut);
    const levelOf = (path: string) =>
      t.logs.entries().find((e) => e.path === path && e.msg === 'request')?.level;
    // pino's levels: debug 20, info 30.
    expect(levelOf('/healthz')).toBe(20);
    expect(levelOf('/readyz')).toBe(20);
    expect(levelOf('/api/openapi.json')).toBe(20);
    expect(levelOf('/api/agents/00000000-0000-4000-8000-000000000000')).toBe(30);
    expect(levelOf('/api/auth/sign-out')).toBe(30);
  });

  it('answers a server fault with 500 internal_error, no detail, and the request id logged', async () => {
    const broken = await createTestContext(kind);
    const client = broken.newClient();
    await signUpUser(client);
    await broken.ctx.jobs.stop();
    await broken.ctx.database.close();
    const res = await client.callError(getMe);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error' });
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const logged = broken.logs
      .entries()
      .find((e) => e.requestId === requestId && e.level === 50 && e.err);
    expect(logged).toBeDefined();
    await broken.close();
  });
});
