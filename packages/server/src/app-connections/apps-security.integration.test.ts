import { createHash } from 'node:crypto';
import {
  appCallback,
  appCallbackScript,
  authorizeApp,
  getConnectionToken,
  listAppConnections,
  listAppProviders,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppsTest,
  anotherProcess,
  appRowCounts,
  connectApp,
  createAppsTest,
  newUser,
  TEST_PUBLIC_URL,
} from '../../test/apps-fixture.js';
import { consentAtStandIn } from '../../test/stand-in-consent.js';
import type { TestClient } from '../../test/test-client.js';
import { databaseKinds } from '../../test/test-db.js';
import { APP_BINDING_COOKIE } from './browser-binding.js';

/**
 * RFC 9700's rules (the table in oauth-notes.md §5) and the bad-input list of the issue. Where
 * each row of the table is tested:
 * - one-time state bound to its user, 10 minutes: "state: …" below;
 * - PKCE S256: here ("PKCE: …") and apps-flow ("the challenge is the S256 hash …");
 * - exact redirect URI, no open redirector: "redirect URI: …", "the callback page: …", apps-flow;
 * - mix-up: "mix-up: …"; code replay: "the same callback twice …";
 * - referrer, history and messaging: "the callback page: …";
 * - rotation and reuse detection: apps-refresh ("50 concurrent requests …", "two service
 *   processes …") and apps-processes (real processes on PostgreSQL);
 * - stored tokens protected: crypto/token-cipher.test.ts and apps-delete ("no plaintext token …");
 * - timeouts and transient errors: apps-refresh (11 s, 5xx, 429, invalid_client, wrong secret,
 *   revoked refresh token);
 * - revocation on delete: apps-delete.
 */
describe.each(databaseKinds)('authorize and callback rules on %s', (kind) => {
  let apps: AppsTest;
  beforeAll(async () => {
    apps = await createAppsTest(kind);
  });
  afterAll(() => apps?.close());

  /** Authorize and consent, without delivering the callback yet. */
  async function pendingCallback(client: TestClient, provider: 'suite' | 'code' | 'music') {
    const res = await client.call(authorizeApp, { query: { provider } });
    expect(res.status).toBe(302);
    const location = res.headers.get('location') as string;
    const callbackUrl = await consentAtStandIn(location, 'mallory');
    return { location: new URL(location), path: `${callbackUrl.pathname}${callbackUrl.search}` };
  }
  const connectionsOf = async (client: TestClient) => (await client.call(listAppConnections)).body;

  describe('refusals before any redirect store nothing', () => {
    it.each([
      ['an unknown provider', 'provider=mail', 400, 'invalid_request'],
      [
        'an unknown scope',
        'provider=suite&scopes=calendar,gmail.readonly',
        400,
        'scope_not_allowed',
      ],
      ['drive', 'provider=suite&scopes=drive', 400, 'scope_not_allowed'],
      ['drive.readonly', 'provider=suite&scopes=drive.readonly', 400, 'scope_not_allowed'],
      [
        'drive in full form',
        `provider=suite&scopes=${encodeURIComponent('https://www.googleapis.com/auth/drive')}`,
        400,
        'scope_not_allowed',
      ],
      ['a scope beyond the fixed set', 'provider=code&scopes=admin:org', 400, 'scope_not_allowed'],
      [
        'a foreign account',
        'provider=suite&accountId=9f1c1b7e-8a1e-4c1a-9a57-6a4f1c0b2d11',
        404,
        'not_found',
      ],
    ])('%s', async (_, query, status, error) => {
      const user = await newUser(apps.t);
      const before = await appRowCounts(apps.t);
      // A raw path: each query is malformed on purpose (a provider or scope not offered).
      const res = await user.client.get(`/api/apps/authorize?${query}`);
      expect(res).toMatchObject({ status, body: { error } });
      expect(await appRowCounts(apps.t)).toEqual(before);
    });

    it("another user's account: 404", async () => {
      const owner = await newUser(apps.t);
      const other = await newUser(apps.t);
      const res = await other.client.callError(authorizeApp, {
        query: { provider: 'suite', accountId: owner.accountId },
      });
      expect(res).toMatchObject({ status: 404, body: { error: 'not_found' } });
    });

    it('a provider without client credentials: 503 provider_not_configured', async () => {
      const user = await newUser(apps.t);
      const { client: process } = await anotherProcess(
        apps.t,
        apps.standIns.suite.env(),
        user.client,
      );
      // The registry says so before anyone tries.
      const providers = await process.call(listAppProviders);
      expect(Object.fromEntries(providers.body.map((p) => [p.provider, p.configured]))).toEqual({
        suite: true,
        code: false,
        music: false,
      });
      const before = await appRowCounts(apps.t);
      expect(await process.callError(authorizeApp, { query: { provider: 'code' } })).toMatchObject({
        status: 503,
        body: { error: 'provider_not_configured' },
      });
      expect(await appRowCounts(apps.t)).toEqual(before);
    });

    it('no session: 401, and an Agent token may not authorize', async () => {
      expect(
        (await apps.t.newClient().callError(authorizeApp, { query: { provider: 'suite' } })).status,
      ).toBe(401);
    });
  });

  describe('state: single use, 10 minutes, bound to its user', () => {
    it('an unknown state: 400 page, nothing stored', async () => {
      const before = await appRowCounts(apps.t);
      // Raw paths for the callback: the provider's redirect, forged, is the point.
      const res = await apps.t.newClient().get('/api/apps/callback?code=abc&state=forged');
      expect(res.status).toBe(400);
      expect(res.body).toContain('data-outcome="failed"');
      expect(await appRowCounts(apps.t)).toEqual(before);
      expect((await apps.t.newClient().send(appCallback)).status).toBe(400);
    });

    it('the same callback twice: the replay fails, one connection (code replay)', async () => {
      const user = await newUser(apps.t);
      const { path } = await pendingCallback(user.client, 'music');
      expect((await user.client.get(path)).status).toBe(200);
      expect((await user.client.get(path)).status).toBe(400);
      expect(await connectionsOf(user.client)).toHaveLength(1);
    });

    it('two parallel callbacks with one state: exactly one connection', async () => {
      const user = await newUser(apps.t);
      const { path } = await pendingCallback(user.client, 'suite');
      const results = await Promise.all([user.client.get(path), user.client.get(path)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(await connectionsOf(user.client)).toHaveLength(1);
    });

    it('after 10 minutes the state is refused', async () => {
      const user = await newUser(apps.t);
      const { path } = await pendingCallback(user.client, 'suite');
      apps.t.clock.advance(10 * 60_000 + 1);
      const before = await appRowCounts(apps.t);
      expect((await user.client.get(path)).status).toBe(400);
      expect((await appRowCounts(apps.t)).connections).toBe(before.connections);
    });

    it('a provider error on the callback: 400 page, state used up, nothing stored', async () => {
      const user = await newUser(apps.t);
      const res = await user.client.call(authorizeApp, { query: { provider: 'suite' } });
      const state = new URL(res.headers.get('location') as string).searchParams.get('state');
      const before = await appRowCounts(apps.t);
      const callback = await user.client.get(
        `/api/apps/callback?error=access_denied&state=${state}`,
      );
      expect(callback.status).toBe(400);
      expect(await appRowCounts(apps.t)).toEqual({ ...before, states: before.states - 1 });
    });
  });

  describe('browser binding: the callback must come from the browser that authorized', () => {
    const bindingCookie = (res: { headers: Headers }) =>
      res.headers.getSetCookie().find((line) => line.startsWith(`${APP_BINDING_COOKIE}=`));

    it('authorize sets a short-lived HttpOnly, SameSite=Lax cookie for the callback path only', async () => {
      const user = await newUser(apps.t);
      const res = await user.client.call(authorizeApp, { query: { provider: 'suite' } });
      expect(res.status).toBe(302);
      const cookie = bindingCookie(res) as string;
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; SameSite=Lax/);
      expect(cookie).toMatch(/; Path=\/api\/apps\/callback(;|$)/);
      expect(cookie).toMatch(/; Max-Age=600(;|$)/);
      // Only its hash is stored: the value in the cookie is not in the database.
      const value = user.client.cookies.get(APP_BINDING_COOKIE) as string;
      expect(value).toMatch(/^[\w-]{43}$/);
      const stored = await apps.t.ctx.database.db
        .selectFrom('appAuthorizationStates')
        .selectAll()
        .where('userId', '=', user.userId)
        .executeTakeFirstOrThrow();
      expect(JSON.stringify(stored)).not.toContain(value);
    });

    it("A hands the provider URL to B: B consents, the callback in B's browser is refused", async () => {
      const a = await newUser(apps.t);
      const authorize = await a.client.call(authorizeApp, { query: { provider: 'music' } });
      // B is signed in to the service too, and has a binding of B's own (another flow).
      const b = await newUser(apps.t);
      await b.client.call(authorizeApp, { query: { provider: 'suite' } });
      const callbackUrl = await consentAtStandIn(
        authorize.headers.get('location') as string,
        'bob',
      );
      const before = await appRowCounts(apps.t);
      const res = await b.client.get(`${callbackUrl.pathname}${callbackUrl.search}`);
      expect(res.status).toBe(400);
      expect(res.body).toContain('data-outcome="failed"');
      expect((await appRowCounts(apps.t)).connections).toBe(before.connections);
      expect(await connectionsOf(a.client)).toEqual([]);
      expect(await connectionsOf(b.client)).toEqual([]);
      // The state is used up: A's own browser cannot take it afterwards either.
      expect((await a.client.get(`${callbackUrl.pathname}${callbackUrl.search}`)).status).toBe(400);
    });

    it('a browser without any binding cookie (a fresh jar) is refused, nothing stored', async () => {
      const a = await newUser(apps.t);
      const { path } = await pendingCallback(a.client, 'suite');
      const before = await appRowCounts(apps.t);
      const res = await apps.t.newClient().get(path);
      expect(res.status).toBe(400);
      expect((await appRowCounts(apps.t)).connections).toBe(before.connections);
      expect(await connectionsOf(a.client)).toEqual([]);
    });

    it('the browser that authorized connects, and its cookie is cleared', async () => {
      const user = await newUser(apps.t);
      const { path } = await pendingCallback(user.client, 'suite');
      const res = await user.client.get(path);
      expect(res.status).toBe(200);
      expect(bindingCookie(res)).toMatch(/; Max-Age=0/);
      expect(user.client.cookies.has(APP_BINDING_COOKIE)).toBe(false);
      expect(await connectionsOf(user.client)).toHaveLength(1);
    });

    it('a refused callback clears the cookie too', async () => {
      const user = await newUser(apps.t);
      await user.client.call(authorizeApp, { query: { provider: 'suite' } });
      const res = await user.client.get('/api/apps/callback?code=abc&state=forged');
      expect(res.status).toBe(400);
      expect(bindingCookie(res)).toMatch(/; Max-Age=0/);
    });
  });

  it('PKCE: a verifier that does not match the challenge fails the exchange, nothing stored', async () => {
    const user = await newUser(apps.t);
    const { location, path } = await pendingCallback(user.client, 'suite');
    const hash = createHash('sha256')
      .update(location.searchParams.get('state') as string)
      .digest('base64url');
    await apps.t.ctx.database.db
      .updateTable('appAuthorizationStates')
      .set({ codeVerifier: 'x'.repeat(43) })
      .where('stateHash', '=', hash)
      .execute();
    expect((await user.client.get(path)).status).toBe(400);
    expect(await connectionsOf(user.client)).toEqual([]);
  });

  it('redirect URI: the stand-in refuses any other than the registered one', async () => {
    const user = await newUser(apps.t);
    const res = await user.client.call(authorizeApp, { query: { provider: 'suite' } });
    const url = new URL(res.headers.get('location') as string);
    url.searchParams.set('redirect_uri', `${TEST_PUBLIC_URL}/api/apps/callback/x`);
    const refused = await fetch(url, { redirect: 'manual' });
    expect(refused.status).toBe(400);
  });

  it('mix-up: a callback for a suite flow carrying the music issuer is refused', async () => {
    const user = await newUser(apps.t);
    const { path } = await pendingCallback(user.client, 'suite');
    const forged = new URL(path, TEST_PUBLIC_URL);
    expect(forged.searchParams.get('iss')).toBe(apps.standIns.suite.issuer);
    forged.searchParams.set('iss', apps.standIns.music.issuer);
    const res = await user.client.get(`${forged.pathname}${forged.search}`);
    expect(res.status).toBe(400);
    expect(await connectionsOf(user.client)).toEqual([]);
  });

  it('the callback page: no-store, no-referrer, CSP, exact origin, no code, state or token', async () => {
    const user = await newUser(apps.t);
    const { path } = await pendingCallback(user.client, 'music');
    const res = await user.client.get(`${path}&next=${encodeURIComponent('https://evil.test')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const query = new URL(path, TEST_PUBLIC_URL).searchParams;
    for (const secret of [query.get('code'), query.get('state')])
      expect(res.body).not.toContain(secret);
    expect(res.body).not.toContain('evil.test');
    expect(res.body).toContain(`data-origin="${TEST_PUBLIC_URL}"`);
    expect(res.body).not.toMatch(/<script>/); // no inline script: the CSP allows none
    const script = await user.client.call(appCallbackScript);
    expect(script.body).toContain('postMessage(message, data.origin)');
    expect(script.body).not.toContain("'*'");
  });

  it('re-authorizing the same provider account replaces the connection and makes it active', async () => {
    const user = await newUser(apps.t);
    await connectApp(user.client, 'suite', { login: 'sam' });
    const [first] = await connectionsOf(user.client);
    await apps.t.ctx.database.db
      .updateTable('appConnections')
      .set({ status: 'error' })
      .where('id', '=', first?.id ?? '')
      .execute();
    await connectApp(user.client, 'suite', { login: 'sam', scopes: 'contacts' });
    const after = await connectionsOf(user.client);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: first?.id, status: 'active' });
    expect(after[0]?.scopes).toContain('https://www.googleapis.com/auth/contacts');
    expect(
      (await user.client.call(getConnectionToken, { params: { id: first?.id ?? '' } })).status,
    ).toBe(200);
    // A different provider account is a second connection.
    await connectApp(user.client, 'suite', { login: 'other' });
    expect(await connectionsOf(user.client)).toHaveLength(2);
  });
});
