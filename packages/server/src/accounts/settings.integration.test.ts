import type { Session } from '@svc/contract';
import {
  changePassword,
  createApiToken,
  endSession,
  getMe,
  listApiTokens,
  listSessions,
  signIn as signInEndpoint,
  updateMe,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const PASSWORD = 'correct horse battery';

describe.each(databaseKinds)("a user's settings on %s", (kind) => {
  let t: TestContext;
  let email = '';
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  /** The same user signed in from another browser. */
  const signIn = async (password = PASSWORD, userAgent = 'Other Browser/2') => {
    const client = t.newClient();
    const res = await client.send(
      signInEndpoint,
      { body: { email, password } },
      { headers: { 'user-agent': userAgent } },
    );
    return { client, status: res.status };
  };
  const sessionsOf = async (client: TestClient) =>
    (await client.call(listSessions)).body.sessions as Session[];

  let first: TestClient;

  it('lists the sessions with where they began, and ends another one', async () => {
    first = t.newClient();
    email = (await signUpUser(first)).user.email;
    const { client: second } = await signIn();
    const listed = await sessionsOf(first);
    expect(listed).toHaveLength(2);
    expect(listed.filter((s) => s.current)).toHaveLength(1);
    const other = listed.find((s) => !s.current) as Session;
    expect(other).toMatchObject({ userAgent: 'Other Browser/2', clientAddress: second.address });
    expect(JSON.stringify(listed)).not.toMatch(/idHash|[0-9a-f]{64}/);

    expect((await first.call(endSession, { params: { id: other.id } })).status).toBe(204);
    expect((await second.callError(getMe)).status).toBe(401);
    expect((await first.callError(endSession, { params: { id: other.id } })).status).toBe(404);
    // Another user's session is not found either.
    const stranger = t.newClient();
    await signUpUser(stranger);
    const theirs = (await sessionsOf(stranger))[0] as Session;
    expect((await first.callError(endSession, { params: { id: theirs.id } })).status).toBe(404);
    expect((await stranger.call(getMe)).status).toBe(200);
  });

  it('changes the name', async () => {
    const res = await first.call(updateMe, { body: { name: '  Grace Hopper ' } });
    expect(res).toMatchObject({ status: 200, body: { name: 'Grace Hopper' } });
    expect((await first.call(getMe)).body.user.name).toBe('Grace Hopper');
    expect((await first.callError(updateMe, { body: { name: '' } })).status).toBe(400);
  });

  it('changes the password given the current one, ending every other session and every token', async () => {
    const { client: second } = await signIn();
    const { client: third } = await signIn();
    const token = (await first.call(createApiToken, { body: { name: 'ci', scope: 'write' } })).body
      .token;
    const withToken = () =>
      t.newClient().send(getMe, {}, { headers: { authorization: `Bearer ${token}` } });
    expect((await withToken()).status).toBe(200);
    const wrong = await first.callError(changePassword, {
      body: {
        currentPassword: 'not it at all',
        newPassword: 'a brand new passphrase',
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.issues?.[0]?.path).toEqual(['body', 'currentPassword']);
    const short = await first.callError(changePassword, {
      body: {
        currentPassword: PASSWORD,
        newPassword: 'short',
      },
    });
    expect(short.status).toBe(400);
    expect((await second.call(getMe)).status).toBe(200);

    const changed = await first.call(changePassword, {
      body: {
        currentPassword: PASSWORD,
        newPassword: 'a brand new passphrase',
      },
    });
    // Whoever held the old password may have made a token too: the answer says what ended.
    expect(changed).toMatchObject({ status: 200, body: { revokedSessions: 2, revokedTokens: 1 } });
    expect((await first.call(getMe)).status).toBe(200);
    expect((await second.callError(getMe)).status).toBe(401);
    expect((await third.callError(getMe)).status).toBe(401);
    expect((await withToken()).status).toBe(401);
    expect((await first.call(listApiTokens)).body.tokens).toEqual([]);
    expect((await signIn(PASSWORD)).status).toBe(401);
    expect((await signIn('a brand new passphrase')).status).toBe(200);
    expect(t.logs.lines.join('\n')).not.toContain('a brand new passphrase');
  });

  it('slows guesses of the current password down like failed sign-ins', async () => {
    const guess = () =>
      first.send(changePassword, {
        body: { currentPassword: 'guess', newPassword: 'whatever it is' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await guess()).status);
    expect(statuses).toContain(429);
    expect(statuses.slice(0, 4)).toEqual([400, 400, 400, 400]);
  });
});
