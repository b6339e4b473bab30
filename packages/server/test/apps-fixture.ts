import { authorizeApp, createAgent, listAppConnections } from '@svc/contract';
import { issueAgentToken } from '../src/agents/agent-token.js';
import { composeService } from '../src/composition-root.js';
import { loadConfig } from '../src/config/config.js';
import { resolveSecrets } from '../src/config/dev-keys.js';
import { consentAtStandIn } from './stand-in-consent.js';
import { type StandIn, type StandInKind, startStandIn } from './stand-in-provider.js';
import { TestClient } from './test-client.js';
import { createTestContext, signUpUser, TEST_ENV, type TestContext } from './test-context.js';
import type { DatabaseKind } from './test-db.js';

/** The service's public URL in tests (the default for PORT 8080), and so its callback. */
export const TEST_PUBLIC_URL = 'http://localhost:8080';
export const TEST_REDIRECT_URI = `${TEST_PUBLIC_URL}/api/apps/callback`;

export interface AppsTest {
  readonly t: TestContext;
  readonly standIns: Readonly<Record<StandInKind, StandIn>>;
  close(): Promise<void>;
}

/** A test context with the three stand-ins started and configured. */
export async function createAppsTest(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; accessTokenTtlSeconds?: number } = {},
): Promise<AppsTest> {
  const start = (k: StandInKind) =>
    startStandIn(k, {
      redirectUri: TEST_REDIRECT_URI,
      ...(options.accessTokenTtlSeconds && {
        accessTokenTtlSeconds: options.accessTokenTtlSeconds,
      }),
    });
  const [suite, code, music] = await Promise.all([start('suite'), start('code'), start('music')]);
  const t = await createTestContext(kind, {
    env: { ...suite.env(), ...code.env(), ...music.env(), ...options.env },
  });
  return {
    t,
    standIns: { suite, code, music },
    close: async () => {
      await t.close();
      await Promise.all([suite.close(), code.close(), music.close()]);
    },
  };
}

/** A signed-up user with a session client. */
export async function newUser(t: TestContext) {
  const client = t.newClient();
  const { user, account } = await signUpUser(client);
  return { client, userId: user.id, accountId: account.id };
}

/**
 * The whole browser flow: authorize (302), log in and consent at the stand-in with a real HTTP
 * client, then the callback in `client`'s browser. Returns the callback response.
 */
export async function connectApp(
  client: TestClient,
  provider: StandInKind,
  options: { login?: string; scopes?: string; accountId?: string } = {},
) {
  const { scopes, accountId } = options;
  const authorize = await client.call(authorizeApp, { query: { provider, scopes, accountId } });
  const location = authorize.headers.get('location') as string;
  const callbackUrl = await consentAtStandIn(location, options.login ?? 'alice');
  // A raw path: the callback's query is the provider's (code, state), which no descriptor names.
  const callback = await client.get(`${callbackUrl.pathname}${callbackUrl.search}`);
  return { authorizeUrl: new URL(location), callbackUrl, callback };
}

/** An Agent of the account and its HMAC token's Authorization header. */
export async function agentOf(t: TestContext, client: TestClient, accountId: string) {
  const created = await client.call(createAgent, {
    body: { name: 'apps', size: 'small', region: 'eu', billingType: 'metered', accountId },
  });
  const token = issueAgentToken(t.ctx.secrets.hmacKey, created.body.id, 1);
  return { agentId: created.body.id, headers: { authorization: `Bearer ${token}` } };
}

/** The connection's row, as stored. */
export const connectionRow = (t: TestContext, id: string) =>
  t.ctx.database.db
    .selectFrom('appConnections')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** Sets how long the cached access token of a connection has left, on the test clock. */
export const setAccessTokenLeft = (t: TestContext, id: string, leftMs: number) =>
  t.ctx.database.db
    .updateTable('appConnections')
    .set({ accessTokenExpiresAt: new Date(t.clock.now().getTime() + leftMs) })
    .where('id', '=', id)
    .execute();

/** Makes the cached access token of an hour-long lifetime stale: 1 minute left. */
export const expireAccessToken = (t: TestContext, id: string) => setAccessTokenLeft(t, id, 60_000);

/** Connects `provider` for a new user and returns the user and the connection's id. */
export async function connectedUser(t: TestContext, provider: StandInKind, login = 'alice') {
  const user = await newUser(t);
  const { callback } = await connectApp(user.client, provider, { login });
  if (callback.status !== 200) throw new Error(`callback answered ${callback.status}`);
  const [connection] = (await user.client.call(listAppConnections)).body;
  if (!connection) throw new Error('no connection listed after the callback');
  return { ...user, connectionId: connection.id };
}

/**
 * Another service process on the same database: its own services, memory and app, with its own
 * environment (e.g. a provider left unconfigured). `as` copies a browser's session cookies.
 */
export async function anotherProcess(t: TestContext, env: Record<string, string>, as?: TestClient) {
  const { config, secrets: raw } = loadConfig({
    ...TEST_ENV,
    DATA_DIR: t.ctx.config.dataDir,
    ...env,
  });
  const secrets = await resolveSecrets(config, raw, () => {});
  // Its own services on the shared database, which the first process has already migrated.
  const { ctx, app } = await composeService(config, secrets, {
    work: false,
    parts: { database: t.ctx.database, clock: t.clock, logDestination: t.logs },
  });
  const client = new TestClient(app, new URL(config.http.publicUrl).origin);
  for (const [name, value] of as?.cookies ?? []) client.cookies.set(name, value);
  return { ctx, client };
}

/** Every stand-in's variables, for `anotherProcess`. */
export const standInEnv = (apps: AppsTest) => ({
  ...apps.standIns.suite.env(),
  ...apps.standIns.code.env(),
  ...apps.standIns.music.env(),
});

/** Rows of the app connection tables, to check that a refused request stored nothing. */
export async function appRowCounts(t: TestContext) {
  const count = async (table: 'appAuthorizationStates' | 'appConnections') =>
    Number(
      (
        await t.ctx.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    states: await count('appAuthorizationStates'),
    connections: await count('appConnections'),
  };
}
