import { createAgent, createOrg, getAgent, signIn } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '../../test/metric-value.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const TOKEN = 'metrics-token-for-tests-0123456789';
const NAMES = [
  'svc_http_request_duration_seconds',
  'svc_jobs',
  'svc_machines',
  'svc_token_refreshes_total',
  'svc_bundle_publishes_total',
  'svc_sign_in_failures_total',
];

describe.each(databaseKinds)('GET /metrics on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind, { env: { METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => t?.close());

  it('answers loopback (IPv4 and IPv6) in Prometheus text with every metric, jobs and machines counted', async () => {
    const { account } = await signUpUser(t.client);
    const created = await t.client.call(createAgent, {
      body: {
        name: 'counted',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        accountId: account.id,
      },
    });
    expect(created.status).toBe(201);
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      const res = await t.newClient(address).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      for (const name of NAMES) expect(res.body).toContain(`# TYPE ${name} `);
    }
    const text = (await t.newClient('127.0.0.1').get('/metrics')).body as string;
    // The startup reconciler jobs are in pg-boss's table; the new Agent is in one of its states.
    expect(text).toMatch(/^svc_jobs\{queue="[^"]+",state="[a-z]+"\} [1-9]/m);
    expect(text).toMatch(/^svc_machines\{kind="agent",state="[a-z_]+",driver="[a-z]+"\} 1$/m);
    // This process's pool: PGlite's one session, or the PostgreSQL pool's ten connections.
    expect(text).toMatch(
      kind === 'pglite' ? /^svc_db_pool_max_connections 1$/m : /^svc_db_pool_max_connections 10$/m,
    );
    expect(text).toMatch(/^svc_database_up 1$/m);
  });

  it('is no account: the slug is reserved, so no public page is shadowed', async () => {
    const res = await t.client.callError(createOrg, { body: { name: 'Metrics', slug: 'metrics' } });
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('refuses other addresses without the token (401) and answers with it', async () => {
    const outside = t.newClient('203.0.113.9');
    expect(await outside.get('/metrics')).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
    const wrong = await outside.get('/metrics', {
      headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
    });
    expect(wrong.status).toBe(401);
    const right = await outside.get('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(right.status).toBe(200);
    expect(right.body).toContain('# TYPE svc_http_request_duration_seconds histogram');
  });

  it('counts a request under its route pattern, never the path with its id', async () => {
    const id = '0b7c6a52-1d1e-4c55-9d63-5a1f2a3b4c5d';
    const route = { method: 'GET', route: '/api/agents/:id', status: '401' };
    const registry = t.ctx.metrics.registry;
    const before = await metricValue(registry, 'svc_http_request_duration_seconds', route);
    expect((await t.newClient().callError(getAgent, { params: { id } })).status).toBe(401);
    expect(await metricValue(registry, 'svc_http_request_duration_seconds', route)).toBe(
      before + 1,
    );
    const text = (await t.newClient('127.0.0.1').get('/metrics')).body as string;
    expect(text).toContain('route="/api/agents/:id"');
    expect(text).not.toContain(id);
  });

  it('counts a failed sign-in', async () => {
    const client = t.newClient();
    const { user } = await signUpUser(client);
    const failures = () =>
      metricValue(t.ctx.metrics.registry, 'svc_sign_in_failures_total', {
        reason: 'invalid_credentials',
      });
    const before = await failures();
    const res = await t
      .newClient()
      .callError(signIn, { body: { email: user.email, password: 'not the password' } });
    expect(res.status).toBe(401);
    expect(await failures()).toBe(before + 1);
    // A good sign-in is no failure.
    const ok = await t
      .newClient()
      .call(signIn, { body: { email: user.email, password: 'correct horse battery' } });
    expect(ok.status).toBe(200);
    expect(await failures()).toBe(before + 1);
  });
});

describe('GET /metrics without METRICS_TOKEN, behind a trusted proxy', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('pglite', { env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => t?.close());

  it('is for this host only: 403 elsewhere, and for what the proxy forwarded', async () => {
    expect(await t.newClient('203.0.113.9').get('/metrics')).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
    // X-Forwarded-For does not make a request local, and a proxied one is not local either.
    const forwarded = await t
      .newClient('127.0.0.1')
      .get('/metrics', { headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(forwarded.status).toBe(403);
    expect((await t.newClient('127.0.0.1').get('/metrics')).status).toBe(200);
  });

  it('counts a proxy that says Forwarded (RFC 7239) alone like one that says X-Forwarded-For', async () => {
    for (const forwarded of [
      'for=203.0.113.7',
      'for="[2001:db8::1]:4711";proto=https',
      'for=_hidden',
    ]) {
      const answer = await t.newClient('127.0.0.1').get('/metrics', { headers: { forwarded } });
      expect(answer.status, forwarded).toBe(403);
    }
  });
});
