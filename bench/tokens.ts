import { randomBytes, randomUUID } from 'node:crypto';
import { issueAgentToken } from '../packages/server/src/agents/agent-token.js';
import { findConnectionForAgent } from '../packages/server/src/app-connections/app-connections.repo.js';
import { measure, report, withFloor, withServedApp } from './served-app.js';

/**
 * The cached token path, `GET /api/apps/{id}/token` with an Agent's HMAC token (MAC check, one
 * statement for the Agent and the connection, AES-GCM open), against its floor (a plain
 * node:http server sending the same statement through the same Kysely and driver) and
 * `GET /healthz`, in the same process. Targets: ≥ 0.8 × the floor; p99 < 25 ms on PostgreSQL.
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
    const claim = { agentId: agent.id, gen: 1 };
    const check = await findConnectionForAgent(ctx.database.db, id, claim);
    if (check?.id !== id) throw new Error('the floor does not find the connection');
    const bare = await measure(`${base}/healthz`);
    let floor = bare;
    await withFloor(
      () => findConnectionForAgent(ctx.database.db, id, claim),
      async (floorBase) => {
        floor = await measure(`${floorBase}/`);
      },
    );
    const token = await measure(`${base}/api/apps/${id}/token`, { authorization });
    report(ctx.config.database.kind, 'GET /api/apps/{id}/token (cached)', {
      bare,
      floor,
      endpoint: token,
    });
  });
}
