import {
  acceptInvitation,
  addMember,
  createApiToken,
  createOrg,
  getMe,
  listMembers,
  requestPasswordReset,
  signIn as signInEndpoint,
  undoEmailChange,
  updateMe,
  verifyEmail,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  joinOrganization,
  linkTokens,
  mailedLinkToken,
  outboxTexts,
  verifyAddress,
} from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const PASSWORD = 'correct horse battery';
const DAY = 24 * 3_600_000;

/**
 * Changing the e-mail address: the password, then the link to the new address; until then the
 * old one signs in and resets, and it can take the account back. Mail goes to the outbox.
 */
describe.each(databaseKinds)('changing the e-mail address on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  let n = 0;
  const address = (name: string) => `${name}-${kind}-${++n}@example.com`;
  const newUser = async (name = 'owner') => {
    const client = t.newClient();
    const email = address(name);
    const { user } = await signUpUser(client, { email, name: 'Ada Lovelace' });
    return { client, email, id: user.id };
  };
  const signIn = (email: string, password = PASSWORD) =>
    t.newClient().send(signInEndpoint, { body: { email, password } });
  const change = (client: TestClient, email: string, currentPassword = PASSWORD) =>
    client.send(updateMe, { body: { email, currentPassword } });
  /** The texts of the mail to `to` whose subject matches, once one has arrived. */
  const mailTo = (to: string, subject: RegExp) =>
    waitFor(
      async () =>
        (await outboxTexts(t, to)).find((text) => subject.test(text.split('\n')[0] ?? '')),
      15_000,
      `a message "${subject}" to ${to}`,
    );

  it('needs the current password; a wrong one is 403 and counts as a failed sign-in', async () => {
    const { client, email } = await newUser();
    const without = await client.callError(updateMe, { body: { email: address('new') } });
    expect(without.status).toBe(400);
    expect(without.body.issues?.[0]?.path).toEqual(['body', 'currentPassword']);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await change(client, address('x'), 'guess')).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403]);
    const wrong = await change(client, address('x'), 'guess');
    expect(wrong.status).toBe(429);
    // The same counter as signing in as this user from this address.
    const fromHere = t.newClient(client.address);
    const signInHere = await fromHere.callError(signInEndpoint, {
      body: { email, password: PASSWORD },
    });
    expect(signInHere.status).toBe(429);
    expect((await client.call(getMe)).body).toMatchObject({
      user: { email },
      pendingEmailChange: null,
    });
  });

  it('takes effect only from the link to the new address; until then the old one is the account’s', async () => {
    const { client, email: old } = await newUser();
    const fresh = address('new');
    const asked = await change(client, fresh.toUpperCase());
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ email: old, pendingEmailChange: { email: fresh } });
    expect((await client.call(getMe)).body).toMatchObject({
      user: { email: old },
      pendingEmailChange: { email: fresh },
    });
    // The old address still signs in and gets the resets; the new one is nobody's yet.
    expect((await signIn(old)).status).toBe(200);
    expect((await signIn(fresh)).status).toBe(401);
    await t.newClient().call(requestPasswordReset, { body: { email: fresh } });
    await t.newClient().call(requestPasswordReset, { body: { email: old } });
    await mailTo(old, /Reset your password/);
    expect((await outboxTexts(t, fresh)).some((text) => /Reset/.test(text))).toBe(false);
    // The old address was told, with a link that undoes it.
    const notice = await mailTo(old, /change of your e-mail address/);
    expect(notice).toContain(fresh);
    expect(await linkTokens(t, old, 'undo-email-change')).toHaveLength(1);

    const token = await mailedLinkToken(t, fresh, 'verify-email');
    const opened = await t.newClient().call(verifyEmail, { body: { token } });
    expect(opened).toMatchObject({ status: 200, body: { email: fresh } });
    expect((await client.call(getMe)).body).toMatchObject({
      user: { email: fresh, emailVerified: true },
      pendingEmailChange: null,
    });
    expect((await signIn(old)).status).toBe(401);
    expect((await signIn(fresh)).status).toBe(200);
    expect(await mailTo(old, /was changed/)).toContain(fresh);
    // Used once.
    expect((await t.newClient().callError(verifyEmail, { body: { token } })).status).toBe(400);
  });

  it('a link expires after 24 hours, and asking for the current address drops the change', async () => {
    const { client, email: old } = await newUser();
    const late = address('late');
    await change(client, late);
    const token = await mailedLinkToken(t, late, 'verify-email');
    t.clock.advance(DAY + 1000);
    expect((await client.call(getMe)).body.pendingEmailChange).toBeNull();
    expect((await t.newClient().callError(verifyEmail, { body: { token } })).status).toBe(400);

    const other = address('other');
    await change(client, other);
    const dropped = await change(client, old);
    expect(dropped).toMatchObject({ status: 200, body: { email: old, pendingEmailChange: null } });
    const stale = await mailedLinkToken(t, other, 'verify-email');
    expect((await t.newClient().callError(verifyEmail, { body: { token: stale } })).status).toBe(
      400,
    );
    expect((await client.call(getMe)).body.user.email).toBe(old);
  });

  it('the old address takes the account back: every session and token ends, a new password', async () => {
    const owner = await newUser();
    const thief = t.newClient();
    expect(
      (await thief.call(signInEndpoint, { body: { email: owner.email, password: PASSWORD } }))
        .status,
    ).toBe(200);
    const token = (await thief.call(createApiToken, { body: { name: 'loot', scope: 'write' } }))
      .body.token;
    const stolen = address('thief');
    await change(thief, stolen);
    await t.newClient().call(verifyEmail, {
      body: {
        token: await mailedLinkToken(t, stolen, 'verify-email'),
      },
    });
    expect((await owner.client.call(getMe)).body.user.email).toBe(stolen);

    // The newest undo link came with the notice that the change took effect.
    const undo = await mailedLinkToken(t, owner.email, 'undo-email-change');
    const browser = t.newClient();
    const weak = await browser.callError(undoEmailChange, {
      body: {
        token: undo,
        password: 'short',
      },
    });
    expect(weak.status).toBe(400);
    const back = await browser.call(undoEmailChange, {
      body: {
        token: undo,
        password: 'mine again, for good',
      },
    });
    expect(back).toMatchObject({
      status: 200,
      body: {
        user: { email: owner.email, emailVerified: true },
        revokedSessions: 2,
        revokedTokens: 1,
      },
    });
    expect((await browser.call(getMe)).status).toBe(200);
    for (const client of [owner.client, thief])
      expect((await client.callError(getMe)).status).toBe(401);
    const withToken = await t
      .newClient()
      .callError(getMe, {}, { headers: { authorization: `Bearer ${token}` } });
    expect(withToken.status).toBe(401);
    expect((await signIn(stolen)).status).toBe(401);
    expect((await signIn(owner.email)).status).toBe(401);
    expect((await signIn(owner.email, 'mine again, for good')).status).toBe(200);
    const again = await t
      .newClient()
      .callError(undoEmailChange, { body: { token: undo, password: 'mine again, for good' } });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_link' } });
  });

  it('the undo link also cancels a change still waiting for its link', async () => {
    const owner = await newUser();
    const wanted = address('wanted');
    await change(owner.client, wanted);
    const undo = await mailedLinkToken(t, owner.email, 'undo-email-change');
    const confirm = await mailedLinkToken(t, wanted, 'verify-email');
    const back = await t
      .newClient()
      .call(undoEmailChange, { body: { token: undo, password: 'mine again, for good' } });
    expect(back).toMatchObject({ status: 200, body: { user: { email: owner.email } } });
    expect((await t.newClient().callError(verifyEmail, { body: { token: confirm } })).status).toBe(
      400,
    );
    expect((await signIn(owner.email, 'mine again, for good')).status).toBe(200);
  });

  it('answers the same for a taken address, which is told instead, and counts both alike', async () => {
    const holder = await newUser('holder');
    const { client, email } = await newUser();
    const taken = await client.call(updateMe, {
      body: { email: holder.email, currentPassword: PASSWORD },
    });
    const free = await client.call(updateMe, {
      body: { email: address('free'), currentPassword: PASSWORD },
    });
    expect(taken.status).toBe(200);
    expect(free.status).toBe(200);
    expect(Object.keys(taken.body).sort()).toEqual(Object.keys(free.body).sort());
    expect(taken.body).toMatchObject({ email, pendingEmailChange: { email: holder.email } });
    // The holder learns someone tried; no link reaches it, and its account is untouched.
    await mailTo(holder.email, /Someone tried to use your e-mail address/);
    expect(await linkTokens(t, holder.email, 'verify-email')).toHaveLength(1);
    expect((await signIn(holder.email)).status).toBe(200);
    // Taken or not, each request counts against the same limit (5 per account).
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await change(client, i % 2 ? holder.email : address('more'))).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('an invitation is accepted only by the verified owner of the invited address', async () => {
    const owner = await newUser('org-owner');
    const org = await owner.client.call(createOrg, {
      body: { name: 'Acme', slug: `acme-${kind}` },
    });
    const invited = address('invited');
    expect(
      (
        await owner.client.call(addMember, {
          params: { id: org.body.id },
          body: {
            email: invited,
            role: 'admin',
          },
        })
      ).status,
    ).toBe(202);
    const token = await mailedLinkToken(t, invited, 'invitation');
    // Someone who asked to move to the invited address has not got it.
    const mover = await newUser('mover');
    await change(mover.client, invited);
    const byMover = await mover.client.callError(acceptInvitation, { body: { token } });
    expect(byMover.status).toBe(403);
    expect(byMover.body.error).toBe('forbidden');
    // Signing up with the address is not owning it: verify first.
    const invitee = t.newClient();
    await signUpUser(invitee, { email: invited });
    const unverified = await invitee.callError(acceptInvitation, { body: { token } });
    expect(unverified).toMatchObject({ status: 403, body: { error: 'email_unverified' } });
    expect(unverified.body.detail).toContain(invited);
    await verifyAddress(t, invitee, invited);
    const accepted = await invitee.call(acceptInvitation, { body: { token } });
    expect(accepted).toMatchObject({ status: 200, body: { id: org.body.id, role: 'admin' } });
    // The helper the other tests use takes the same road.
    const later = await newUser('later');
    await joinOrganization(t, {
      owner: owner.client,
      orgId: org.body.id,
      member: later.client,
      email: later.email,
      role: 'member',
    });
    const members = (await owner.client.call(listMembers, { params: { id: org.body.id } })).body
      .members;
    expect(members).toHaveLength(3);
  });
});
