import {
  createOrg,
  deleteAppConnection,
  getConnectionToken,
  listAppConnections,
} from '@svc/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppsTest,
  agentOf,
  anotherProcess,
  connectApp,
  connectedUser,
  connectionRow,
  createAppsTest,
  standInEnv,
} from '../../test/apps-fixture.js';
import { databaseKinds } from '../../test/test-db.js';
import { runAdminCommand } from '../admin/commands.js';

describe.each(databaseKinds)('deleting connections, and tokens at rest, on %s', (kind) => {
  let apps: AppsTest;
  /** Every plaintext token the tests saw, to look for afterwards. */
  const plaintexts = new Set<string>();
  beforeAll(async () => {
    apps = await createAppsTest(kind);
  });
  afterAll(() => apps?.close());

  async function remember(connectionId: string) {
    const row = await connectionRow(apps.t, connectionId);
    const binding = { connectionId, provider: row.provider };
    plaintexts.add(apps.t.ctx.tokenCipher.open(row.accessToken, binding));
    if (row.refreshToken) plaintexts.add(apps.t.ctx.tokenCipher.open(row.refreshToken, binding));
    return row;
  }

  it('suite: RFC 7009 revocation once, then 204, a tombstone (410 on token, 404 elsewhere)', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'suite');
    const row = await remember(user.connectionId);
    const refresh = t.ctx.tokenCipher.open(row.refreshToken!, {
      connectionId: row.id,
      provider: 'suite',
    });
    const agent = await agentOf(t, user.client, user.accountId);
    // An Agent may not delete.
    expect(
      (
        await t
          .newClient()
          .callError(deleteAppConnection, { params: { id: row.id } }, { headers: agent.headers })
      ).status,
    ).toBe(401);
    const revocations = standIns.suite.counts.revocation;
    expect((await user.client.call(deleteAppConnection, { params: { id: row.id } })).status).toBe(
      204,
    );
    expect(standIns.suite.counts.revocation).toBe(revocations + 1);
    expect(await standIns.suite.provider.RefreshToken.find(refresh)).toBeUndefined();
    expect(
      await user.client.callError(getConnectionToken, { params: { id: row.id } }),
    ).toMatchObject({
      status: 410,
      body: { error: 'connection_error' },
    });
    expect(
      (
        await t
          .newClient()
          .callError(getConnectionToken, { params: { id: row.id } }, { headers: agent.headers })
      ).status,
    ).toBe(410);
    expect(
      (await user.client.callError(deleteAppConnection, { params: { id: row.id } })).status,
    ).toBe(404);
    expect((await user.client.call(listAppConnections)).body).toEqual([]);
    // Someone else learns nothing about the id.
    const stranger = await connectedUser(t, 'music', 'stranger');
    expect(
      (await stranger.client.callError(getConnectionToken, { params: { id: row.id } })).status,
    ).toBe(404);
  });

  it("code: DELETE /applications/{client_id}/token; the token stops working at the provider's API", async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'code', 'octo');
    const row = await remember(user.connectionId);
    const access = t.ctx.tokenCipher.open(row.accessToken, {
      connectionId: row.id,
      provider: 'code',
    });
    const me = () =>
      fetch(`${standIns.code.issuer}/user`, { headers: { authorization: `Bearer ${access}` } });
    expect((await me()).status).toBe(200);
    const revocations = standIns.code.counts.revocation;
    expect((await user.client.call(deleteAppConnection, { params: { id: row.id } })).status).toBe(
      204,
    );
    expect(standIns.code.counts.revocation).toBe(revocations + 1);
    expect((await me()).status).toBe(401);
  });

  it('music: nothing to call (no revocation endpoint), deleted', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'music', 'dj2');
    await remember(user.connectionId);
    const calls = { ...standIns.music.counts };
    expect(
      (await user.client.call(deleteAppConnection, { params: { id: user.connectionId } })).status,
    ).toBe(204);
    expect(standIns.music.counts).toEqual(calls);
  });

  it('a hanging or failing provider never blocks deletion (bounded by the timeout)', async () => {
    const { t, standIns } = apps;
    const { client } = await anotherProcess(t, { ...standInEnv(apps), REFRESH_TIMEOUT_MS: '500' });
    for (const faults of [{ revocationDelayMs: 30_000 }, { revocationStatus: 503 }]) {
      for (const provider of ['suite', 'code'] as const) {
        const user = await connectedUser(t, provider, `hang-${provider}`);
        await remember(user.connectionId);
        for (const [name, value] of user.client.cookies) client.cookies.set(name, value);
        standIns[provider].faults = faults;
        const started = performance.now();
        expect(
          (await client.call(deleteAppConnection, { params: { id: user.connectionId } })).status,
        ).toBe(204);
        expect(performance.now() - started).toBeLessThan(3_000);
        standIns[provider].faults = {};
        expect(
          (await user.client.callError(getConnectionToken, { params: { id: user.connectionId } }))
            .status,
        ).toBe(410);
      }
    }
    expect(t.logs.text()).toContain('revocation failed; the connection is deleted anyway');
  });

  it('a grant shared by two connections (same provider account) is not revoked with one', async () => {
    const { t, standIns } = apps;
    const user = await connectedUser(t, 'suite', 'shared');
    const org = await user.client.call(createOrg, {
      body: { name: 'Org', slug: `org-${Date.now()}` },
    });
    await connectApp(user.client, 'suite', { login: 'shared', accountId: org.body.id });
    const both = (await user.client.call(listAppConnections)).body;
    expect(both).toHaveLength(2);
    for (const c of both) await remember(c.id);
    const revocations = standIns.suite.counts.revocation;
    expect(
      (await user.client.call(deleteAppConnection, { params: { id: user.connectionId } })).status,
    ).toBe(204);
    expect(standIns.suite.counts.revocation).toBe(revocations);
    // HMAC lists only the Agent's account.
    const agent = await agentOf(t, user.client, org.body.id);
    const listed = await t.newClient().call(listAppConnections, {}, { headers: agent.headers });
    expect(listed.body.map((c: { accountId: string }) => c.accountId)).toEqual([org.body.id]);
  });

  it('reencrypt-tokens seals every row with the new primary key; old-key-only processes cannot open them', async () => {
    const { t } = apps;
    const user = await connectedUser(t, 'music', 'rotate');
    await remember(user.connectionId);
    const newKey = Buffer.alloc(32, 7).toString('base64');
    const oldKeys = `test1:${Buffer.alloc(32, 1).toString('base64')}`;
    const rotated = await anotherProcess(
      t,
      { ...standInEnv(apps), ENCRYPTION_KEYS: `k2:${newKey},${oldKeys}` },
      user.client,
    );
    const result = (await runAdminCommand(rotated.ctx, 'reencrypt-tokens', {})) as {
      connections: number;
      resealed: number;
    };
    expect(result.resealed).toBe(result.connections);
    expect(result.connections).toBeGreaterThan(0);
    const rows = await t.ctx.database.db.selectFrom('appConnections').selectAll().execute();
    for (const row of rows) expect(row.accessToken.split('.')[1]).toBe('k2');
    expect(
      (await rotated.client.call(getConnectionToken, { params: { id: user.connectionId } })).status,
    ).toBe(200);
    // Idempotent: nothing left to do.
    expect(await runAdminCommand(rotated.ctx, 'reencrypt-tokens', {})).toMatchObject({
      resealed: 0,
    });
  });

  it('no plaintext token in a dump of the database, in the logs, or in the connection list', async () => {
    const { t } = apps;
    expect(plaintexts.size).toBeGreaterThan(8);
    const dump = await sql<{ line: string }>`
      select row_to_json(c)::text as line from app_connections c
      union all select row_to_json(s)::text from app_authorization_states s`.execute(
      t.ctx.database.db,
    );
    const text = dump.rows.map((r) => r.line).join('\n');
    const logs = t.logs.text();
    for (const token of plaintexts) {
      expect(text).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });
});
