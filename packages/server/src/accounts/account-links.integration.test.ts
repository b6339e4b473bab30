import {
  acceptInvitation,
  addMember,
  confirmPasswordReset,
  createAgent as createAgentEndpoint,
  createApiToken,
  createInvitation,
  createOrg,
  getMe,
  listAuditEvents,
  listInvitations,
  listMembers,
  requestPasswordReset,
  resendVerification,
  revokeInvitation,
  signIn as signInEndpoint,
  signUp as signUpEndpoint,
  updateMe,
  verifyEmail,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSmtpServer, type TestSmtpServer } from '../../test/smtp-server.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const PASSWORD = 'correct horse battery';
const HOUR = 3_600_000;

/**
 * Verification, password reset and invitations end to end: the service's mail job delivers to a
 * real SMTP server in this process, and each test follows the link that arrived.
 */
describe.each(databaseKinds)('e-mail links over SMTP on %s', (kind) => {
  let smtp: TestSmtpServer;
  let t: TestContext;

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    t = await createTestContext(kind, {
      env: { SMTP_URL: smtp.url, EMAIL_VERIFICATION: 'required' },
      overrides: { immediateJobRetries: true },
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  let counter = 0;
  const newAddress = (name: string) => `${name}-${++counter}-${Date.now()}@example.com`;

  /** The newest message to `to` whose subject matches, once it has arrived. */
  const mailTo = (to: string, subject: RegExp) =>
    waitFor(
      () =>
        smtp.received.findLast(
          (mail) => mail.envelope.to.includes(to) && subject.test(mail.parsed.subject ?? ''),
        ),
      15_000,
      `a message "${subject}" to ${to}`,
    );

  /** The token of the dashboard link `page` in the newest such message to `to`. */
  async function linkToken(to: string, subject: RegExp, page: string) {
    const mail = await mailTo(to, subject);
    const base = t.ctx.config.http.publicUrl;
    const match = new RegExp(`${base}/dashboard/${page}\\?token=([A-Za-z0-9_-]+)`).exec(
      mail.parsed.text ?? '',
    );
    if (!match?.[1]) throw new Error(`no ${page} link in: ${mail.parsed.text}`);
    // The HTML part carries the same link.
    expect(mail.parsed.html).toContain(`${base}/dashboard/${page}?token=${match[1]}`);
    return match[1];
  }

  const signUp = async (client: TestClient, email: string) =>
    (await signUpUser(client, { email, name: 'Ada Lovelace' })).user;

  const me = async (client: TestClient) => (await client.call(getMe)).body;

  const agentInput = {
    body: {
      name: 'Verified only',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
    },
  } as const;

  describe('verification', () => {
    it('sign-up mails a link that verifies the address once; until then machines are refused', async () => {
      const client = t.newClient();
      const email = newAddress('verify');
      await signUp(client, email);
      expect((await me(client)).user.emailVerified).toBe(false);
      expect((await me(client)).emailVerification).toBe('required');
      const refused = await client.callError(createAgentEndpoint, agentInput);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('email_unverified');
      expect(refused.body.detail).toContain(email);

      const token = await linkToken(email, /^Verify your e-mail/, 'verify-email');
      // Anyone holding the link may open it: the page need not be signed in.
      const verified = await t.newClient().call(verifyEmail, { body: { token } });
      expect(verified.status).toBe(200);
      expect(verified.body).toEqual({ email });
      expect((await me(client)).user.emailVerified).toBe(true);
      expect((await client.call(createAgentEndpoint, agentInput)).status).toBe(201);

      const again = await t.newClient().callError(verifyEmail, { body: { token } });
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_link');
      const resend = await client.callError(resendVerification);
      expect(resend.status).toBe(409);
    });

    it('a link works for 24 hours; resending mails a new one, rate-limited per account', async () => {
      const client = t.newClient();
      const email = newAddress('late');
      await signUp(client, email);
      const first = await linkToken(email, /^Verify/, 'verify-email');
      t.clock.advance(24 * HOUR + 1000);
      const expired = await t.newClient().callError(verifyEmail, { body: { token: first } });
      expect(expired.body.error).toBe('invalid_link');
      expect((await me(client)).user.emailVerified).toBe(false);

      const sent = smtp.received.length;
      expect((await client.call(resendVerification)).status).toBe(202);
      await waitFor(() => smtp.received.length > sent || undefined, 15_000, 'the resent link');
      const second = await linkToken(email, /^Verify/, 'verify-email');
      expect(second).not.toBe(first);
      // Sending again voids the link before: only the newest one works.
      const before = smtp.received.length;
      expect((await client.call(resendVerification)).status).toBe(202);
      await waitFor(() => smtp.received.length > before || undefined, 15_000, 'the third link');
      const third = await linkToken(email, /^Verify/, 'verify-email');
      expect(third).not.toBe(second);
      const voided = await t.newClient().callError(verifyEmail, { body: { token: second } });
      expect(voided.body.error).toBe('invalid_link');
      // A tampered token (one character changed) is refused like an unknown one.
      const tampered = `${third.slice(0, -1)}${third.endsWith('A') ? 'B' : 'A'}`;
      expect(
        (await t.newClient().callError(verifyEmail, { body: { token: tampered } })).status,
      ).toBe(400);
      expect((await t.newClient().call(verifyEmail, { body: { token: third } })).status).toBe(200);

      // Nobody can flood an inbox through "send again".
      const spammer = t.newClient();
      await signUp(spammer, newAddress('flood'));
      const answers: number[] = [];
      for (let i = 0; i < 7; i++) {
        answers.push((await spammer.send(resendVerification)).status);
      }
      expect(answers).toContain(429);
      expect(answers.filter((s) => s === 202).length).toBeLessThanOrEqual(5);
    });

    it('a changed e-mail takes effect from the link to the new address; the old one is told', async () => {
      const client = t.newClient();
      const old = newAddress('old');
      await signUp(client, old);
      await t
        .newClient()
        .call(verifyEmail, { body: { token: await linkToken(old, /^Verify/, 'verify-email') } });
      const fresh = newAddress('new');
      const changed = await client.call(updateMe, {
        body: {
          email: fresh.toUpperCase(),
          currentPassword: PASSWORD,
        },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({
        email: old,
        emailVerified: true,
        pendingEmailChange: { email: fresh },
      });
      const notice = await mailTo(old, /change of your e-mail address/);
      expect(notice.parsed.text).toContain(fresh);
      expect(notice.parsed.text).toContain('/dashboard/undo-email-change?token=');
      const token = await linkToken(fresh, /^Confirm your new e-mail/, 'verify-email');
      expect((await t.newClient().call(verifyEmail, { body: { token } })).status).toBe(200);
      expect((await me(client)).user).toMatchObject({ email: fresh, emailVerified: true });
      expect((await mailTo(old, /was changed/)).parsed.text).toContain(fresh);
      // The old address no longer signs in; the new one does.
      const oldSignIn = await t
        .newClient()
        .callError(signInEndpoint, { body: { email: old, password: PASSWORD } });
      expect(oldSignIn.status).toBe(401);
      const newSignIn = await t
        .newClient()
        .call(signInEndpoint, { body: { email: fresh, password: PASSWORD } });
      expect(newSignIn.status).toBe(200);
    });
  });

  describe('password reset', () => {
    it('answers the same for any address, mails a one-hour link, and ends every session', async () => {
      const email = newAddress('reset');
      const laptop = t.newClient();
      await signUp(laptop, email);
      const phone = t.newClient();
      expect(
        (await phone.call(signInEndpoint, { body: { email, password: PASSWORD } })).status,
      ).toBe(200);

      const stranger = newAddress('nobody');
      const unknown = await t.newClient().call(requestPasswordReset, { body: { email: stranger } });
      const known = await t.newClient().call(requestPasswordReset, { body: { email } });
      expect(unknown.status).toBe(202);
      expect(known.status).toBe(202);
      expect(unknown.body).toEqual(known.body);
      const token = await linkToken(email, /^Reset your password/, 'reset-password');
      expect(smtp.received.some((mail) => mail.envelope.to.includes(stranger))).toBe(false);

      const browser = t.newClient();
      const weak = await browser.callError(confirmPasswordReset, {
        body: {
          token,
          password: 'short',
        },
      });
      expect(weak.status).toBe(400);
      const done = await browser.call(confirmPasswordReset, {
        body: {
          token,
          password: 'a brand new passphrase',
        },
      });
      expect(done.status).toBe(200);
      expect(done.body.user).toMatchObject({ email, emailVerified: true });
      // This browser is signed in; the others were signed out.
      expect((await browser.call(getMe)).status).toBe(200);
      expect((await laptop.callError(getMe)).status).toBe(401);
      expect((await phone.callError(getMe)).status).toBe(401);
      const oldPassword = await t
        .newClient()
        .callError(signInEndpoint, { body: { email, password: PASSWORD } });
      expect(oldPassword.status).toBe(401);
      const newPassword = await t
        .newClient()
        .call(signInEndpoint, { body: { email, password: 'a brand new passphrase' } });
      expect(newPassword.status).toBe(200);

      // Used once: the same link sets nothing again.
      const reused = await t
        .newClient()
        .callError(confirmPasswordReset, { body: { token, password: 'yet another passphrase' } });
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe('invalid_link');
    });

    it('a link expires after an hour, and requests are rate-limited per address', async () => {
      const email = newAddress('expiry');
      await signUp(t.newClient(), email);
      await t.newClient().call(requestPasswordReset, { body: { email } });
      const token = await linkToken(email, /^Reset/, 'reset-password');
      t.clock.advance(HOUR + 1000);
      const late = await t
        .newClient()
        .callError(confirmPasswordReset, { body: { token, password: 'a brand new passphrase' } });
      expect(late.status).toBe(400);
      expect(late.body.error).toBe('invalid_link');
      const signIn = await t
        .newClient()
        .call(signInEndpoint, { body: { email, password: PASSWORD } });
      expect(signIn.status).toBe(200);

      // From one client address, a few; from many, the recipient's own (larger) counter still
      // stops the flood. The first request above counted too.
      const client = t.newClient();
      const fromOne: number[] = [];
      for (let i = 0; i < 4; i++) {
        fromOne.push((await client.send(requestPasswordReset, { body: { email } })).status);
      }
      expect(fromOne).toEqual([202, 202, 202, 429]);
      const fromMany: number[] = [];
      for (let i = 0; i < 7; i++) {
        fromMany.push((await t.newClient().send(requestPasswordReset, { body: { email } })).status);
      }
      expect(fromMany).toEqual([202, 202, 202, 202, 202, 202, 429]);
    });

    it('ends personal access tokens too, and spends no password hash on a link that does not work', async () => {
      const email = newAddress('tokens');
      const owner = t.newClient();
      await signUp(owner, email);
      const token = (await owner.call(createApiToken, { body: { name: 'ci', scope: 'write' } }))
        .body.token;
      await t.newClient().call(requestPasswordReset, { body: { email } });
      const link = await linkToken(email, /^Reset/, 'reset-password');
      const done = await t.newClient().call(confirmPasswordReset, {
        body: {
          token: link,
          password: 'a brand new passphrase',
        },
      });
      expect(done.status).toBe(200);
      const withToken = await t
        .newClient()
        .callError(getMe, {}, { headers: { authorization: `Bearer ${token}` } });
      expect(withToken.status).toBe(401);

      // Guessing links from one address is slowed down like guessing passwords.
      const guesser = t.newClient();
      const answers: number[] = [];
      for (let i = 0; i < 21; i++) {
        const guess = await guesser.send(confirmPasswordReset, {
          body: {
            token: `${'x'.repeat(40)}${i}`,
            password: 'a brand new passphrase',
          },
        });
        answers.push(guess.status);
      }
      expect(answers.slice(0, 20).every((status) => status === 400)).toBe(true);
      expect(answers[20]).toBe(429);
    });
  });

  describe('invitations', () => {
    async function newOrganization() {
      const owner = t.newClient();
      const ownerEmail = newAddress('owner');
      await signUp(owner, ownerEmail);
      const org = await owner.call(createOrg, {
        body: { name: 'Acme Labs', slug: `acme-${++counter}` },
      });
      expect(org.status).toBe(201);
      return { owner, ownerEmail, orgId: org.body.id as string, slug: org.body.slug as string };
    }

    it('a new person signs up and joins with the invited role; the link works once', async () => {
      const { owner, orgId, slug } = await newOrganization();
      const email = newAddress('invitee');
      // Names reach mails and their subjects: one line only.
      const badName = await t.newClient().callError(signUpEndpoint, {
        body: {
          email: newAddress('bad'),
          password: PASSWORD,
          name: 'A\nBcc: x',
        },
      });
      expect(badName.status).toBe(400);
      const invited = await owner.call(createInvitation, {
        params: { id: orgId },
        body: {
          email,
          role: 'admin',
        },
      });
      expect(invited.status).toBe(201);
      expect(invited.body).toMatchObject({ accountId: orgId, email, role: 'admin' });
      expect(JSON.stringify(invited.body)).not.toMatch(/token/i);
      const listed = await owner.call(listInvitations, { params: { id: orgId } });
      expect(listed.body.invitations.map((i: { id: string }) => i.id)).toEqual([invited.body.id]);

      const mail = await mailTo(email, /invited you to Acme Labs/);
      expect(mail.parsed.text).toContain('as an admin');
      const token = await linkToken(email, /invited you/, 'invitation');

      // Accepting needs a signed-in user with the invited address: the invitee signs up first.
      const invitee = t.newClient();
      expect((await invitee.callError(acceptInvitation, { body: { token } })).status).toBe(401);
      const someoneElse = t.newClient();
      await signUp(someoneElse, newAddress('forwarded'));
      const refused = await someoneElse.callError(acceptInvitation, { body: { token } });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain(email);
      const user = await signUp(invitee, email);
      // Signing up with the address is not owning it: the invitee verifies it first.
      const unverified = await invitee.callError(acceptInvitation, { body: { token } });
      expect(unverified).toMatchObject({ status: 403, body: { error: 'email_unverified' } });
      await t.newClient().call(verifyEmail, {
        body: {
          token: await linkToken(email, /^Verify/, 'verify-email'),
        },
      });
      const accepted = await invitee.call(acceptInvitation, { body: { token } });
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ id: orgId, slug, role: 'admin' });
      const members = await owner.call(listMembers, { params: { id: orgId } });
      expect(members.body.members).toContainEqual(
        expect.objectContaining({ userId: user.id, role: 'admin' }),
      );
      expect(
        (await owner.call(listInvitations, { params: { id: orgId } })).body.invitations,
      ).toEqual([]);

      const again = await invitee.callError(acceptInvitation, { body: { token } });
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_link');

      // Already a member: a new invitation is refused.
      const twice = await owner.callError(createInvitation, {
        params: { id: orgId },
        body: { email, role: 'member' },
      });
      expect(twice.status).toBe(409);
      expect(twice.body.error).toBe('already_member');

      const audit = await owner.call(listAuditEvents, {
        params: { id: orgId },
        query: { kind: 'invitation' },
      });
      expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual([
        'invitation.accept',
        'invitation.create',
      ]);
    });

    it('expires after 7 days, stops working when revoked, and only managers invite', async () => {
      const { owner, orgId } = await newOrganization();
      const email = newAddress('slow');
      await owner.call(createInvitation, {
        params: { id: orgId },
        body: { email, role: 'member' },
      });
      const token = await linkToken(email, /invited you/, 'invitation');
      const invitee = t.newClient();
      await signUp(invitee, email);
      t.clock.advance(7 * 24 * HOUR + 1000);
      expect(
        (await owner.call(listInvitations, { params: { id: orgId } })).body.invitations,
      ).toEqual([]);
      expect((await invitee.callError(acceptInvitation, { body: { token } })).body.error).toBe(
        'invalid_link',
      );

      const revokedEmail = newAddress('revoked');
      const invitation = await owner.call(createInvitation, {
        params: { id: orgId },
        body: {
          email: revokedEmail,
          role: 'member',
        },
      });
      const revokedToken = await linkToken(revokedEmail, /invited you/, 'invitation');
      const revoke = await owner.call(revokeInvitation, {
        params: { id: orgId, invitationId: invitation.body.id },
      });
      expect(revoke.status).toBe(204);
      expect(
        (await invitee.callError(acceptInvitation, { body: { token: revokedToken } })).status,
      ).toBe(400);
      expect((await owner.call(listMembers, { params: { id: orgId } })).body.members).toHaveLength(
        1,
      );

      // A plain member may not invite; a stranger does not see the organization at all.
      const member = t.newClient();
      const memberEmail = newAddress('member');
      await signUp(member, memberEmail);
      await owner.call(addMember, {
        params: { id: orgId },
        body: { email: memberEmail, role: 'member' },
      });
      await t.newClient().call(verifyEmail, {
        body: {
          token: await linkToken(memberEmail, /^Verify/, 'verify-email'),
        },
      });
      const joined = await member.call(acceptInvitation, {
        body: {
          token: await linkToken(memberEmail, /invited you/, 'invitation'),
        },
      });
      expect(joined.status).toBe(200);
      const byMember = await member.callError(createInvitation, {
        params: { id: orgId },
        body: {
          email: newAddress('x'),
          role: 'member',
        },
      });
      expect(byMember.status).toBe(403);
      const stranger = t.newClient();
      await signUp(stranger, newAddress('stranger'));
      const byStranger = await stranger.callError(listInvitations, { params: { id: orgId } });
      expect(byStranger.status).toBe(404);
    });
  });
});
