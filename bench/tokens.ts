import { randomBytes, randomUUID } from 'node:crypto';
import { issueAgentToken } from '../packages/server/src/agents/agent-token.js';
import { CONNECTIONS, DURATION_S, measure, withServedApp } from './served-app.js';

/**
 * The cached token path, `GET /api/apps/{id}/token` with an Agent's HMAC token (token check,
 * Agent and connection lookups, AES-GCM open), against `GET /healthz` in the same process.
 * Target ratio ≥ 0.6.
 */
export async function run(): Promise<void> {
  await withServedApp({ work: false }, async ({ ctx, base }) => {
    const { user, account } = await ctx.accounts.createUser({
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: 'benchmark password',
      name: 'Bench',
    });
    const agent = await ctx.agents.create(user.id, {
      name: 'bench',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
    });
    const id = randomUUID();
    const binding = { connectionId: id, provider: 'music' };
    await ctx.database.db
      .insertInto('appConnections')
      .values({
        id,
        accountId: account.id,
        provider: 'music',
        status: 'active',
        scopes: ['user-read-email'],
        providerSubject: 'bench',
        providerAccountId: 'bench',
        providerAccountName: 'bench@example.com',
        accessToken: ctx.tokenCipher.seal(randomBytes(32).toString('base64url'), binding),
        refreshToken: ctx.tokenCipher.seal(randomBytes(32).toString('base64url'), binding),
        // Far from expiry: every request takes the cached path.
        accessTokenExpiresAt: new Date(Date.now() + 24 * 3600_000),
      })
      .execute();
    const authorization = `Bearer ${issueAgentToken(ctx.secrets.hmacKey, agent.id, 1)}`;
    const bare = await measure(`${base}/healthz`);
    const token = await measure(`${base}/api/apps/${id}/token`, { authorization });
    const line = (name: string, m: { rps: number; p99: number }) =>
      `${name} ${m.rps.toFixed(0).padStart(7)} req/s   p99 ${String(m.p99).padStart(4)} ms`;
    console.log(
      `database: ${ctx.config.database.kind}, ${CONNECTIONS} connections, ${DURATION_S} s each`,
    );
    console.log(line('GET /healthz (bare route)          ', bare));
    console.log(line('GET /api/apps/{id}/token (cached)  ', token));
    console.log(`ratio token : bare = ${(token.rps / bare.rps).toFixed(2)} (target >= 0.60)`);
  });
}
