import { getConnectionToken, listAppConnections } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppsTest,
  anotherProcess,
  connectedUser,
  connectionRow,
  createAppsTest,
  expireAccessToken,
  setAccessTokenLeft,
  standInEnv,
} from '../../test/apps-fixture.js';
import { metricValue } from '../../test/metric-value.js';
import type { TestClient } from '../../test/test-client.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { createConnectionTokens } from './connection-tokens.js';
import { createProviderClients } from './oauth-client.js';

describe.each(databaseKinds)('token refresh on %s', (kind) => {
  let apps: AppsTest;
  beforeAll(async () => {
    apps = await createAppsTest(kind);
  });
  afterAll(() => apps?.close());

  const secondProcess = async (env: Record<string, string>) =>
    (await anotherProcess(apps.t, env)).client;
  const allEnv = () => standInEnv(apps);

  it.each(['suite', 'music'] as const)(
    '%s: 50 concurrent requests on an expired connection, one refresh, one token for all',
    async (provider) => {
      const { t, standIns } = apps;
      const user = await connectedUser(t, provider);
      const before = await connectionRow(t, user.connectionId);
      await expireAccessToken(t, user.connectionId);
      const calls = standIns[provider].counts.token;
      const responses = await Promise.all(
        Array.from({ length: 50 }, () =>
          user.client.call(getConnectionToken, { params: { id: user.connectionId } }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(new Set(responses.map((r) => r.body.accessToken)).size).toBe(1);
      expect(standIns[provider].counts.token).toBe(calls + 1);
      const after = await connectionRow(t, user.connectionId);
      expect(after.status).toBe('active');
      expect(after.refreshLeaseOwner).toBeNull();
      const open = (row: typeof after) =>
        t.ctx.tokenCipher.open(row.refreshToken!, { connectionId: row.id, provider });
      // Spotify-like: rotated and stored; Google-like: the same refresh token kept.
      if (provider === 'music') expect(open(after)).not.toBe(open(before));
      else expect(open(after)).toBe(open(before));
      // The refresh token that was used: dead at a rotating provider, and presenting it again
      // is reuse, which ends the whole grant (the next refresh is a 410).
      const reuse = await fetch(`${standIns[provider].issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${standIns[provider].clientId}:${standIns[provider].clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: open(before) }),
      });
      expect(reuse.status).toBe(provider === 'music' ? 400 : 200);
      if (provider === 'music') {
        expect(((await reuse.json()) as { error: string }).error).toBe('invalid_grant');
        await expireAccessToken(t, user.connectionId);
        expect(
          (await user.client.callError(getConnectionToken, { params: { id: user.connectionId } }))
            .status,
        ).toBe(410);
      }
    },
  );

  it.each(['suite', 'music'] as const)(
    '%s: two service processes on one database refresh once between them',
    async (provider) => {
      const result = await concurrentTokenRequests(apps, provider, {
        count: 40,
        twoProcesses: true,
        makeStale: (id) => expireAccessToken(apps.t, id),
      });
      expectOneRefreshOneToken(result);
    },
  );

  it('invalid_grant: 410, state error, and the next request 410 without calling the provider', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'suite');
    await expireAccessToken(t, user.connectionId);
    // A refresh token revoked at the provider (RFC 7009), as when the user removes the app.
    const row = await connectionRow(t, user.connectionId);
    const refresh = t.ctx.tokenCipher.open(row.refreshToken!, {
      connectionId: row.id,
      provider: 'suite',
    });
    await (await standIns.suite.provider.RefreshToken.find(refresh))?.destroy();
    const token = () =>
      user.client.callError(getConnectionToken, { params: { id: user.connectionId } });
    const dead = () => refreshes(t, 'suite', 'dead');
    const deadBefore = await dead();
    const registry = t.ctx.metrics.registry;
    const gone = () =>
      metricValue(registry, 'svc_app_token_requests_total', { provider: 'suite', outcome: '410' });
    const tokenCalls = () =>
      metricValue(registry, 'svc_app_provider_request_duration_seconds', {
        provider: 'suite',
        endpoint: 'token',
      });
    const before = { gone: await gone(), tokenCalls: await tokenCalls() };
    expect(await token()).toMatchObject({ status: 410, body: { error: 'connection_error' } });
    expect((await connectionRow(t, user.connectionId)).status).toBe('error');
    expect((await user.client.call(listAppConnections)).body[0]?.status).toBe('error');
    expect(await dead()).toBe(deadBefore + 1);
    const calls = standIns.suite.counts.token;
    expect((await token()).status).toBe(410);
    expect(standIns.suite.counts.token).toBe(calls);
    // Both answers counted as 410; the provider's token endpoint was timed once, for the first.
    expect(await gone()).toBe(before.gone + 2);
    expect(await tokenCalls()).toBe(before.tokenCalls + 1);
    // Its owners are told once, in the move's transaction: the second 410 moved nothing.
    const notices = () =>
      t.ctx.database.db
        .selectFrom('noticeEvents')
        .select('kind')
        .where('accountId', '=', user.accountId)
        .execute();
    await waitFor(async () => (await notices()).length > 0, 15_000, 'the notice job');
    expect(await notices()).toEqual([{ kind: 'connection_error' }]);
  });

  it.each([
    ['HTTP 500', { status: 500 }],
    ['HTTP 503', { status: 503 }],
    ['HTTP 429', { status: 429 }],
    ['invalid_client', { error: 'invalid_client' as const }],
    ['unauthorized_client', { error: 'unauthorized_client' as const }],
  ])(
    '%s: 503 refresh_unavailable, still active, works once the fault is gone',
    async (_, fault) => {
      const { t, standIns } = apps;
      const user = await connectedUser(t, 'music');
      await expireAccessToken(t, user.connectionId);
      const params = { id: user.connectionId };
      const unavailable = await refreshes(t, 'music', 'unavailable');
      const refreshed = await refreshes(t, 'music', 'refreshed');
      standIns.music.faults = fault;
      expect(await user.client.callError(getConnectionToken, { params })).toMatchObject({
        status: 503,
        body: { error: 'refresh_unavailable' },
      });
      const row = await connectionRow(t, user.connectionId);
      expect(row.status).toBe('active');
      expect(row.refreshLeaseOwner).toBeNull();
      standIns.music.faults = {};
      expect((await user.client.call(getConnectionToken, { params })).status).toBe(200);
      expect(await refreshes(t, 'music', 'unavailable')).toBe(unavailable + 1);
      expect(await refreshes(t, 'music', 'refreshed')).toBe(refreshed + 1);
    },
  );

  it('a wrong client secret (our misconfiguration): 503, the connection stays active', async () => {
    const { t } = apps;
    const user = await connectedUser(t, 'music');
    await expireAccessToken(t, user.connectionId);
    const misconfigured = await secondProcess({
      ...allEnv(),
      MUSIC_CLIENT_SECRET: 'rotated-by-mistake',
    });
    for (const [name, value] of user.client.cookies) misconfigured.cookies.set(name, value);
    const res = await misconfigured.callError(getConnectionToken, {
      params: { id: user.connectionId },
    });
    expect(res).toMatchObject({ status: 503, body: { error: 'refresh_unavailable' } });
    expect((await connectionRow(t, user.connectionId)).status).toBe('active');
    expect(
      (await user.client.call(getConnectionToken, { params: { id: user.connectionId } })).status,
    ).toBe(200);
  });

  it('tokens sealed with a key no longer configured: 503 (logged), the lease released', async () => {
    const { t } = apps;
    const user = await connectedUser(t, 'music');
    const otherKey = `other:${Buffer.alloc(32, 9).toString('base64')}`;
    const wrongKeys = await secondProcess({ ...allEnv(), ENCRYPTION_KEYS: otherKey });
    for (const [name, value] of user.client.cookies) wrongKeys.cookies.set(name, value);
    const params = { id: user.connectionId };
    expect(await wrongKeys.callError(getConnectionToken, { params })).toMatchObject({
      status: 503,
      body: { error: 'refresh_unavailable' },
    });
    await expireAccessToken(t, user.connectionId);
    expect((await wrongKeys.callError(getConnectionToken, { params })).status).toBe(503);
    const row = await connectionRow(t, user.connectionId);
    expect(row).toMatchObject({ status: 'active', refreshLeaseOwner: null });
    expect(t.logs.text()).toContain('stored token does not open with ENCRYPTION_KEYS');
    expect((await user.client.call(getConnectionToken, { params })).status).toBe(200);
  });

  it('a provider that is not configured (any more): 503, the connection stays active', async () => {
    const { t } = apps;
    const user = await connectedUser(t, 'music');
    await expireAccessToken(t, user.connectionId);
    const withoutMusic = await secondProcess({ ...apps.standIns.suite.env() });
    for (const [name, value] of user.client.cookies) withoutMusic.cookies.set(name, value);
    const res = await withoutMusic.callError(getConnectionToken, {
      params: { id: user.connectionId },
    });
    expect(res).toMatchObject({ status: 503, body: { error: 'refresh_unavailable' } });
    expect((await connectionRow(t, user.connectionId)).status).toBe('active');
  });

  it('race check: invalid_grant after someone else refreshed is not a dead token', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'suite');
    await expireAccessToken(t, user.connectionId);
    const binding = { connectionId: user.connectionId, provider: 'suite' };
    const expiresAt = new Date(t.clock.now().getTime() + 3600_000);
    standIns.suite.faults = {
      error: 'invalid_grant',
      // Meanwhile another process refreshed and stored its result (a new refresh token).
      before: async () => {
        standIns.suite.faults = { error: 'invalid_grant' };
        await t.ctx.database.db
          .updateTable('appConnections')
          .set({
            refreshToken: t.ctx.tokenCipher.seal('rotated-elsewhere', binding),
            accessToken: t.ctx.tokenCipher.seal('access-from-elsewhere', binding),
            accessTokenExpiresAt: expiresAt,
          })
          .where('id', '=', user.connectionId)
          .execute();
      },
    };
    const res = await user.client.call(getConnectionToken, { params: { id: user.connectionId } });
    standIns.suite.faults = {};
    expect(res).toMatchObject({ status: 200, body: { accessToken: 'access-from-elsewhere' } });
    expect((await connectionRow(t, user.connectionId)).status).toBe('active');
  });

  it('a provider that outlasts REFRESH_TIMEOUT_MS: 503, the connection stays active', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'music');
    await expireAccessToken(t, user.connectionId);
    const { client } = await anotherProcess(
      t,
      { ...standInEnv(apps), REFRESH_TIMEOUT_MS: '200' },
      user.client,
    );
    // The provider holds the call until released, so only the timeout can answer the request;
    // released afterwards, it fails, so no refresh token is rotated behind the service's back.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const calls = standIns.music.counts.token;
    standIns.music.faults = { before: () => held, status: 503 };
    try {
      const res = await client.callError(getConnectionToken, { params: { id: user.connectionId } });
      expect(res).toMatchObject({ status: 503, body: { error: 'refresh_unavailable' } });
      expect(standIns.music.counts.token).toBe(calls + 1);
    } finally {
      standIns.music.faults = {};
      release();
    }
    expect((await connectionRow(t, user.connectionId)).status).toBe('active');
    expect(
      (await user.client.call(getConnectionToken, { params: { id: user.connectionId } })).status,
    ).toBe(200);
  });

  it('no stored token, old or new, appears in the logs of these refreshes', async () => {
    const { t } = apps;
    const rows = await t.ctx.database.db.selectFrom('appConnections').selectAll().execute();
    const logs = t.logs.text();
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      const binding = { connectionId: row.id, provider: row.provider };
      for (const sealed of [row.accessToken, row.refreshToken]) {
        if (sealed) expect(logs).not.toContain(t.ctx.tokenCipher.open(sealed, binding));
      }
    }
    expect(logs).toContain('token refreshed');
  });
});

/**
 * A provider whose access tokens live 60 seconds: a token is fresh while more than
 * `min(5 minutes, half its lifetime)` = 30 s is left. Under a flat 5 minutes every request would
 * refresh, and each process would refresh again after the other.
 */
describe.each(databaseKinds)('tokens that live 60 seconds on %s', (kind) => {
  let apps: AppsTest;
  beforeAll(async () => {
    apps = await createAppsTest(kind, { accessTokenTtlSeconds: 60 });
  });
  afterAll(() => apps?.close());

  const tokenOf = (client: TestClient, id: string) =>
    client.call(getConnectionToken, { params: { id } });
  /** Leaves the connection's token 29 s: stale, not yet expired. */
  const makeStale = (id: string) => setAccessTokenLeft(apps.t, id, 29_000);

  it('the lifetime is stored; the token is answered from the row while more than 30 s are left', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'music');
    const row = await connectionRow(t, user.connectionId);
    expect(row.accessTokenLifetimeSeconds).toBe(60);
    const stored = t.ctx.tokenCipher.open(row.accessToken, {
      connectionId: row.id,
      provider: 'music',
    });
    const calls = standIns.music.counts.token;
    expect((await tokenOf(user.client, user.connectionId)).body.accessToken).toBe(stored);
    await setAccessTokenLeft(t, user.connectionId, 31_000);
    expect((await tokenOf(user.client, user.connectionId)).body.accessToken).toBe(stored);
    expect(standIns.music.counts.token).toBe(calls);
    await makeStale(user.connectionId);
    const refreshed = await tokenOf(user.client, user.connectionId);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.accessToken).not.toBe(stored);
    expect(standIns.music.counts.token).toBe(calls + 1);
  });

  it.each(['suite', 'music'] as const)(
    '%s: 50 concurrent requests in one process, one refresh, one token, and the next request takes it',
    async (provider) => {
      const result = await concurrentTokenRequests(apps, provider, {
        count: 50,
        twoProcesses: false,
        makeStale,
      });
      expectOneRefreshOneToken(result);
      const next = await tokenOf(result.user.client, result.user.connectionId);
      expect(next.body.accessToken).toBe(result.responses[0]?.body.accessToken);
      expect(apps.standIns[provider].counts.token).toBe(result.callsBefore + 1);
    },
  );

  it.each(['suite', 'music'] as const)(
    '%s: two service processes, 40 concurrent requests, one refresh between them, one token',
    async (provider) => {
      const result = await concurrentTokenRequests(apps, provider, {
        count: 40,
        twoProcesses: true,
        makeStale,
      });
      expectOneRefreshOneToken(result);
    },
  );

  it("a request still holding the row from before a refresh that just finished takes that refresh's token", async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'music');
    await makeStale(user.connectionId);
    const before = await connectionRow(t, user.connectionId);
    const calls = standIns.music.counts.token;
    const refreshed = await tokenOf(user.client, user.connectionId);
    expect(standIns.music.counts.token).toBe(calls + 1);
    // Another process's token component, asked with the row as it read it before the refresh.
    const otherProcessTokens = createConnectionTokens({
      database: t.ctx.database,
      clock: t.clock,
      cipher: t.ctx.tokenCipher,
      clients: createProviderClients(t.ctx.config, t.ctx.secrets),
      log: t.ctx.log.root,
      metrics: t.ctx.metrics,
      notices: t.ctx.notices,
      refreshTimeoutMs: t.ctx.config.timing.refreshTimeoutMs,
    });
    const late = await otherProcessTokens.tokenFor(before);
    expect(late.accessToken).toBe(refreshed.body.accessToken);
    expect(standIns.music.counts.token).toBe(calls + 1);
  });
});

/**
 * `count` concurrent token requests on a new connection of `provider` once `makeStale` has run,
 * split between this process and, with `twoProcesses`, another one on the same database; the
 * provider keeps the refresh in flight 300 ms. Returns the answers and the provider's count.
 */
async function concurrentTokenRequests(
  apps: AppsTest,
  provider: 'suite' | 'music',
  options: { count: number; twoProcesses: boolean; makeStale: (id: string) => Promise<unknown> },
) {
  const { t, standIns } = apps;
  const user = await connectedUser(t, provider);
  const other = options.twoProcesses
    ? (await anotherProcess(t, standInEnv(apps), user.client)).client
    : user.client;
  await options.makeStale(user.connectionId);
  const callsBefore = standIns[provider].counts.token;
  standIns[provider].faults = { delayMs: 300 };
  const params = { id: user.connectionId };
  const responses = await Promise.all(
    Array.from({ length: options.count }, (_, i) =>
      (i % 2 ? other : user.client).call(getConnectionToken, { params }),
    ),
  ).finally(() => {
    standIns[provider].faults = {};
  });
  return { user, responses, callsBefore, callsAfter: standIns[provider].counts.token };
}

function expectOneRefreshOneToken(result: Awaited<ReturnType<typeof concurrentTokenRequests>>) {
  expect(result.responses.map((r) => r.status)).toEqual(Array(result.responses.length).fill(200));
  expect(new Set(result.responses.map((r) => r.body.accessToken)).size).toBe(1);
  expect(result.callsAfter).toBe(result.callsBefore + 1);
}

/** How many refreshes of `provider` ended in `outcome`, as `GET /metrics` would count them. */
const refreshes = (t: AppsTest['t'], provider: string, outcome: string) =>
  metricValue(t.ctx.metrics.registry, 'svc_token_refreshes_total', { provider, outcome });
