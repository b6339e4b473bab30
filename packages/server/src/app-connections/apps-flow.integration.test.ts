import { createHash } from 'node:crypto';
import {
  authorizeApp,
  getConnectionToken,
  listAppConnections,
  listAppProviders,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppsTest,
  agentOf,
  connectApp,
  createAppsTest,
  newUser,
  TEST_REDIRECT_URI,
} from '../../test/apps-fixture.js';
import { databaseKinds } from '../../test/test-db.js';

const EXPECTED = {
  suite: {
    login: 'alice',
    scopes: 'calendar,https://www.googleapis.com/auth/drive.file',
    name: 'alice@example.test',
    granted: [
      'email',
      'https://www.googleapis.com/auth/calendar',
      'https://www.googleapis.com/auth/drive.file',
      'openid',
      'profile',
    ],
  },
  code: {
    login: 'octocat',
    name: 'octocat@example.test',
    granted: ['read:org', 'repo', 'user'],
  },
  music: {
    login: 'dj',
    name: 'dj@example.test',
    granted: [
      'playlist-modify-private',
      'playlist-modify-public',
      'playlist-read-collaborative',
      'playlist-read-private',
      'user-modify-playback-state',
      'user-read-email',
      'user-read-playback-state',
      'user-read-private',
      'user-read-recently-played',
      'user-top-read',
    ],
  },
} as const;

describe.each(databaseKinds)('app connections end to end on %s', (kind) => {
  let apps: AppsTest;
  beforeAll(async () => {
    apps = await createAppsTest(kind);
  });
  afterAll(() => apps?.close());

  it.each(['suite', 'code', 'music'] as const)(
    '%s: authorize, consent, callback, token by HMAC, expiry, refresh, new token',
    async (provider) => {
      const { t, standIns } = apps;
      const expected = EXPECTED[provider];
      const user = await newUser(t);
      const { authorizeUrl, callback } = await connectApp(user.client, provider, {
        login: expected.login,
        ...('scopes' in expected && { scopes: expected.scopes }),
      });

      // The authorize redirect: the stand-in's endpoint, S256, the exact redirect URI.
      expect(authorizeUrl.origin).toBe(standIns[provider].issuer);
      expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(TEST_REDIRECT_URI);
      expect(authorizeUrl.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(callback.status).toBe(200);
      expect(callback.headers.get('content-type')).toMatch(/^text\/html/);

      const list = await user.client.call(listAppConnections);
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(1);
      const connection = list.body[0];
      expect(connection).toMatchObject({
        accountId: user.accountId,
        provider,
        status: 'active',
        providerAccountName: expected.name,
      });
      expect([...(connection?.scopes ?? [])].sort()).toEqual(expected.granted);

      const agent = await agentOf(t, user.client, user.accountId);
      const bearer = t.newClient();
      const first = await bearer.call(
        getConnectionToken,
        { params: { id: connection?.id ?? '' } },
        {
          headers: agent.headers,
        },
      );
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('no-store');
      expect(first.body).toMatchObject({
        provider,
        providerAccountName: expected.name,
        providerSubject: connection?.providerSubject,
      });
      expect(first.body.accessToken.length).toBeGreaterThan(10);
      // Only the token endpoint ever shows a token.
      const listed = JSON.stringify(
        (await bearer.call(listAppConnections, {}, { headers: agent.headers })).body,
      );
      expect(listed).toContain(connection?.id);
      expect(listed).not.toContain(first.body.accessToken);

      // Cached while more than five minutes remain: the stand-in is not called.
      const calls = standIns[provider].counts.token;
      const again = await bearer.call(
        getConnectionToken,
        { params: { id: connection?.id ?? '' } },
        {
          headers: agent.headers,
        },
      );
      expect(again.body.accessToken).toBe(first.body.accessToken);
      expect(standIns[provider].counts.token).toBe(calls);

      t.clock.advance(56 * 60_000); // under five minutes left of the hour
      const later = await bearer.call(
        getConnectionToken,
        { params: { id: connection?.id ?? '' } },
        {
          headers: agent.headers,
        },
      );
      expect(later.status).toBe(200);
      if (provider === 'code') {
        // Never refreshed; expiresAt is a year after this request.
        expect(later.body.accessToken).toBe(first.body.accessToken);
        expect(standIns.code.counts.token).toBe(calls);
        const year = Date.parse(later.body.expiresAt) - t.clock.now().getTime();
        expect(year).toBeGreaterThan(364 * 86400_000);
      } else {
        expect(later.body.accessToken).not.toBe(first.body.accessToken);
        expect(standIns[provider].counts.token).toBe(calls + 1);
        expect(Date.parse(later.body.expiresAt)).toBeGreaterThan(
          t.clock.now().getTime() + 55 * 60_000,
        );
      }
      // The session of a member works too; nobody else's does.
      expect(
        (await user.client.call(getConnectionToken, { params: { id: connection?.id ?? '' } }))
          .status,
      ).toBe(200);
      const stranger = await newUser(t);
      expect(
        (
          await stranger.client.callError(getConnectionToken, {
            params: { id: connection?.id ?? '' },
          })
        ).status,
      ).toBe(404);
      expect((await stranger.client.call(listAppConnections)).body).toEqual([]);
      expect(
        (
          await stranger.client.callError(listAppConnections, {
            query: { accountId: user.accountId },
          })
        ).status,
      ).toBe(404);
      const strangerAgent = await agentOf(t, stranger.client, stranger.accountId);
      const foreign = t.newClient();
      const asStranger = { headers: strangerAgent.headers };
      expect(
        (
          await foreign.callError(
            getConnectionToken,
            { params: { id: connection?.id ?? '' } },
            asStranger,
          )
        ).status,
      ).toBe(404);
      expect(
        (
          await foreign.callError(
            listAppConnections,
            { query: { accountId: user.accountId } },
            asStranger,
          )
        ).status,
      ).toBe(404);
      expect((await foreign.call(listAppConnections, {}, asStranger)).body).toEqual([]);
    },
  );

  it('the challenge is the S256 hash of the verifier the state stored', async () => {
    const { t } = apps;
    const user = await newUser(t);
    const res = await user.client.call(authorizeApp, { query: { provider: 'suite' } });
    const url = new URL(res.headers.get('location') as string);
    const state = url.searchParams.get('state') as string;
    const row = await t.ctx.database.db
      .selectFrom('appAuthorizationStates')
      .selectAll()
      .where('stateHash', '=', createHash('sha256').update(state).digest('base64url'))
      .executeTakeFirstOrThrow();
    const challenge = createHash('sha256').update(row.codeVerifier).digest('base64url');
    expect(url.searchParams.get('code_challenge')).toBe(challenge);
    expect(row.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(10 * 60_000);
    // Google's parameters: offline access and the account picker.
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent select_account');
    expect(url.searchParams.get('include_granted_scopes')).toBe('true');
  });

  it('providers: the public registry to a session or an HMAC token, cacheable privately for 300 s', async () => {
    const { t } = apps;
    const user = await newUser(t);
    const agent = await agentOf(t, user.client, user.accountId);
    for (const res of [
      await user.client.call(listAppProviders),
      await t.newClient().call(listAppProviders, {}, { headers: agent.headers }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, max-age=300');
      expect(res.body.map((p: { provider: string }) => p.provider)).toEqual([
        'suite',
        'code',
        'music',
      ]);
      expect(res.body[0]).toMatchObject({
        envVar: 'GOG_ACCESS_TOKEN',
        accountEnvVar: 'GOG_ACCOUNT',
        tokenLifetime: '~1 hour',
        tool: {
          name: expect.any(String),
          installCmd: expect.any(String),
          checkCmd: expect.any(String),
        },
      });
      expect(Object.keys(res.body[0]?.scopeLabels ?? {})).toContain('drive.file');
      // This service has all three configured (see apps-security for one that has not).
      expect(res.body.map((p: { configured: boolean }) => p.configured)).toEqual([
        true,
        true,
        true,
      ]);
      // No OAuth URL or secret in the public projection.
      expect(JSON.stringify(res.body)).not.toMatch(/https?:\/\/|secret/i);
    }
    expect((await t.newClient().callError(listAppProviders)).status).toBe(401);
  });
});
