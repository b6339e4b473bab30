import { randomUUID } from 'node:crypto';
import { getNoticePreferences, NOTICE_KINDS, updateNoticePreferences } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSmtpServer, type TestSmtpServer } from '../../test/smtp-server.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import type { Executor } from '../db/database.js';
import { sendNotice } from './notices.jobs.js';

const DAY_MS = 24 * 3600_000;

/**
 * Each notice kind, produced as its state change produces it (in a transaction), reaches a real
 * SMTP server once per owner and admin, never a plain member, and not a user who turned the kind
 * off (through the API, as Settings does).
 */
describe.each(databaseKinds)('notices on %s', (kind) => {
  let smtp: TestSmtpServer;
  let t: TestContext;
  let account: { id: string; slug: string };
  const emails = { owner: '', admin: '', member: '' };
  let adminClient: TestContext['client'];

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    t = await createTestContext(kind, {
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Svc <mail@svc.example>' },
      overrides: { immediateJobRetries: true },
    });
    const db = t.ctx.database.db;
    account = { id: randomUUID(), slug: `org-${Date.now().toString(36)}` };
    await db
      .insertInto('accounts')
      .values({ id: account.id, slug: account.slug, kind: 'organization', name: 'Acme' })
      .execute();
    // The admin signs up (a session, to set their choices as Settings does); the others are rows.
    adminClient = t.newClient();
    const admin = await signUpUser(adminClient, { name: 'Ada Admin' });
    emails.admin = admin.user.email;
    const members = { owner: admin.user.id, admin: admin.user.id, member: admin.user.id };
    for (const role of ['owner', 'member'] as const) {
      const id = randomUUID();
      emails[role] = `${role}-${id}@example.com`;
      members[role] = id;
      await db
        .insertInto('users')
        .values({ id, email: emails[role], name: `The ${role}`, passwordHash: 'x' })
        .execute();
    }
    await db
      .insertInto('accountMembers')
      .values(
        (['owner', 'admin', 'member'] as const).map((role) => ({
          accountId: account.id,
          userId: members[role],
          role,
        })),
      )
      .execute();
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const inTransaction = <T>(work: (tx: Executor) => Promise<T>) => t.ctx.database.transaction(work);
  const about = (subject: string) =>
    smtp.received.filter((mail) => mail.parsed.subject?.includes(subject));
  const recipientsOf = (subject: string) =>
    about(subject)
      .flatMap((mail) => mail.envelope.to)
      .sort();
  /** Waits until `count` messages about `subject` arrived, and a moment more for strays. */
  async function delivered(subject: string, count: number) {
    await waitFor(() => about(subject).length >= count || undefined, 15_000, `${subject} mailed`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return about(subject);
  }
  const agentRow = async (name: string, state: 'error' | 'stopped') => {
    const id = randomUUID();
    await t.ctx.database.db
      .insertInto('agents')
      .values({
        id,
        accountId: account.id,
        name,
        subdomain: `a${id.slice(0, 8)}`,
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        state,
        statusReason: state === 'error' ? 'start_failed' : null,
        provider: 'test',
      } as never)
      .execute();
    return { id, accountId: account.id, statusReason: state === 'error' ? 'start_failed' : null };
  };

  it('every kind starts on; a user turns one off and back on through the API', async () => {
    const initial = await adminClient.call(getNoticePreferences);
    expect(initial.body).toEqual(Object.fromEntries(NOTICE_KINDS.map((k) => [k, true])));
    const off = await adminClient.call(updateNoticePreferences, {
      body: { subscription_past_due: false, machine_error: false },
    });
    expect(off.body).toMatchObject({ subscription_past_due: false, machine_error: false });
    const on = await adminClient.call(updateNoticePreferences, { body: { machine_error: true } });
    expect(on.body).toEqual({
      connection_error: true,
      machine_error: true,
      agent_idle_stopped: true,
      subscription_past_due: false,
      backup_failed: true,
    });
  });

  it('an Agent in error: mailed once to the owner and the admin, with the reason and its page', async () => {
    const agent = await agentRow('builder', 'error');
    await inTransaction((tx) => t.ctx.notices.machineFailed(tx, 'agent', agent));
    const [mail] = await delivered('Agent builder in Acme failed', 2);
    expect(recipientsOf('Agent builder in Acme failed')).toEqual(
      [emails.owner, emails.admin].map((e) => e.toLowerCase()).sort(),
    );
    expect(mail?.parsed.text).toContain('start_failed');
    expect(mail?.parsed.text).toContain(
      `${t.ctx.config.http.publicUrl}/dashboard/accounts/${account.slug}/agents/${agent.id}`,
    );
    expect(mail?.parsed.text).toContain(`${t.ctx.config.http.publicUrl}/dashboard/settings`);
  });

  it('a Plain VM in error links to its page', async () => {
    const id = randomUUID();
    await t.ctx.database.db
      .insertInto('plainVms')
      .values({
        id,
        accountId: account.id,
        name: 'db-server',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        state: 'error',
        statusReason: 'provisioning_failed',
        provider: 'test',
        osImageKey: 'ubuntu-24.04',
        passwordEnabled: false,
        vaultEntryIds: JSON.stringify([]),
        authorizedKeys: JSON.stringify([]),
        firewallRules: JSON.stringify([]),
      } as never)
      .execute();
    const vm = { id, accountId: account.id, statusReason: 'provisioning_failed' };
    await inTransaction((tx) => t.ctx.notices.machineFailed(tx, 'plain_vm', vm));
    const [mail] = await delivered('Plain VM db-server in Acme failed', 2);
    expect(mail?.parsed.text).toContain(`/accounts/${account.slug}/plain-vms/${id}`);
    expect(mail?.parsed.text).toContain('provisioning_failed');
  });

  it('a subscription past due is not mailed to the admin who turned it off', async () => {
    await inTransaction((tx) => t.ctx.notices.subscriptionPastDue(tx, account.id));
    const mails = await delivered('The subscription of Acme is past due', 1);
    expect(mails).toHaveLength(1);
    expect(recipientsOf('The subscription of Acme is past due')).toEqual([
      emails.owner.toLowerCase(),
    ]);
    expect(mails[0]?.parsed.text).toContain(`/accounts/${account.slug}/billing`);
  });

  it('an app connection in error links to the apps page', async () => {
    const id = randomUUID();
    await t.ctx.database.db
      .insertInto('appConnections')
      .values({
        id,
        accountId: account.id,
        provider: 'suite',
        status: 'error',
        scopes: [],
        providerSubject: 'sub',
        providerAccountId: 'acct',
        providerAccountName: 'ada@suite.example',
        refreshToken: null,
        accessToken: 'sealed',
        accessTokenExpiresAt: null,
        accessTokenLifetimeSeconds: null,
        tokenRequestedAt: null,
        refreshLeaseOwner: null,
        refreshLeaseUntil: null,
        refreshFailedAt: null,
      })
      .execute();
    await inTransaction((tx) => t.ctx.notices.connectionFailed(tx, { id, accountId: account.id }));
    const mails = await delivered('Your suite connection in Acme stopped working', 2);
    expect(mails).toHaveLength(2);
    expect(mails[0]?.parsed.text).toContain('ada@suite.example');
    expect(mails[0]?.parsed.text).toContain(`/accounts/${account.slug}/apps`);
  });

  it('an idle stop is mailed at most once a day per Agent', async () => {
    const agent = await agentRow('sleepy', 'stopped');
    const other = await agentRow('dozy', 'stopped');
    const subject = 'Agent sleepy in Acme was stopped';
    expect(await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, agent))).toBe(true);
    expect(await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, agent))).toBe(false);
    // Another Agent has its own turn.
    expect(await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, other))).toBe(true);
    expect(await delivered(subject, 2)).toHaveLength(2);
    expect(about(subject)[0]?.parsed.text).toContain(`/agents/${agent.id}`);

    t.clock.advance(DAY_MS - 60_000);
    expect(await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, agent))).toBe(false);
    t.clock.advance(60_000);
    expect(await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, agent))).toBe(true);
    expect(await delivered(subject, 4)).toHaveLength(4);
  });

  it('nothing is mailed for a change that rolled back, nor twice for a retried event', async () => {
    const agent = await agentRow('ghost', 'error');
    await expect(
      inTransaction(async (tx) => {
        await t.ctx.notices.machineFailed(tx, 'agent', agent);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    // The same event's job run twice (a retry after its first run committed): mailed once.
    const event = {
      kind: 'machine_error',
      eventId: randomUUID(),
      accountId: account.id,
      machineKind: 'agent',
      machineId: agent.id,
      reason: 'restart_failed',
    } as const;
    await inTransaction((tx) => t.ctx.jobs.enqueue(tx, sendNotice, event));
    await delivered('Agent ghost in Acme failed', 2);
    await inTransaction((tx) => t.ctx.jobs.enqueue(tx, sendNotice, event));
    await waitFor(
      () =>
        t.logs
          .entries()
          .find((e) => e.msg === 'notice already mailed' && e.eventId === event.eventId),
      15_000,
      'the second run',
    );
    const mails = await delivered('Agent ghost in Acme failed', 2);
    expect(mails).toHaveLength(2);
    expect(mails.every((mail) => mail.parsed.text?.includes('restart_failed'))).toBe(true);
  });

  it('a turned-off kind is mailed to nobody who turned it off, and to the rest', async () => {
    await adminClient.call(updateNoticePreferences, { body: { agent_idle_stopped: false } });
    const agent = await agentRow('quiet', 'stopped');
    await inTransaction((tx) => t.ctx.notices.agentIdleStopped(tx, agent));
    const mails = await delivered('Agent quiet in Acme was stopped', 1);
    expect(mails.flatMap((m) => m.envelope.to)).toEqual([emails.owner.toLowerCase()]);
    expect(about('Agent quiet').flatMap((m) => m.envelope.to)).not.toContain(emails.member);
  });
});
