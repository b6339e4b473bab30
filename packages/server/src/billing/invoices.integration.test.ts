import { randomUUID } from 'node:crypto';
import type { Invoice, InvoiceSummary, UpcomingInvoice } from '@svc/contract';
import {
  createAgent,
  createOrg,
  getAgent,
  getInvoice,
  getInvoicePage,
  getUpcomingInvoice,
  listInvoices,
} from '@svc/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collectInvoiceStand,
  insertPeriod,
  insertSlot,
  subscriptionStatusOf,
} from '../../test/billing-fixture.js';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { runAdminCommand } from '../admin/commands.js';
import { collectInvoice, dunning } from './billing.job-types.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The service's "now" at first: mid-March 2026 (a 31-day month). */
const NOW = Date.UTC(2026, 2, 15, 12);
const MARCH = Date.UTC(2026, 2, 1);
const APRIL = Date.UTC(2026, 3, 1);
const FEBRUARY = Date.UTC(2026, 1, 1);
const ORG_NAME = '<img src=x onerror=alert(1)> & "Co"';
const AGENT_NAME = '<i>meter</i> & "me"';

const halfUp = (numerator: number, denominator: number) =>
  Number((2n * BigInt(numerator) + BigInt(denominator)) / (2n * BigInt(denominator)));
const sec = (ms: number) => Math.floor(ms / 1000);

describe.each(databaseKinds)('Upcoming invoice, invoices and dunning on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let admin: TestClient;
  let member: TestClient;
  let stranger: TestClient;
  let orgId: string;
  let orgSlug: string;
  let strangerAccountId: string;
  let agentId: string;
  const setNow = (at: number) => t.clock.advance(at - t.clock.now().getTime());
  const db = () => t.ctx.database.db;
  const statusOf = (accountId: string) => subscriptionStatusOf(db(), accountId);

  beforeAll(async () => {
    t = await createTestContext(kind, { overrides: { extraJobs: [collectInvoiceStand] } });
    setNow(NOW);
    owner = t.newClient();
    await signUpUser(owner);
    orgSlug = `billed-${kind}`;
    const org = await owner.call(createOrg, { body: { name: ORG_NAME, slug: orgSlug } });
    expect(org.status).toBe(201);
    orgId = org.body.id;
    const join = async (role: 'admin' | 'member') => {
      const client = t.newClient();
      const { user } = await signUpUser(client);
      await joinOrganization(t, { owner, orgId, member: client, email: user.email, role });
      return client;
    };
    admin = await join('admin');
    member = await join('member');
    stranger = t.newClient();
    strangerAccountId = (await signUpUser(stranger)).account.id;
    const created = await owner.call(createAgent, {
      body: {
        name: AGENT_NAME,
        size: 'medium',
        region: 'us',
        billingType: 'metered',
        accountId: orgId,
      },
    });
    expect(created.status).toBe(201);
    agentId = created.body.id;
    await waitFor(
      async () =>
        (await owner.call(getAgent, { params: { id: agentId } })).body.status === 'running',
      15_000,
      'running',
    );
    // This test writes the ledger itself.
    await db().deleteFrom('usagePeriods').execute();
  });
  afterAll(() => t?.close());

  it('shows the month so far, its total and its projection to owners and admins', async () => {
    // Metered since the day before March, running until ten hours ago, stopped since (open).
    await insertPeriod(db(), {
      accountId: orgId,
      resourceId: agentId,
      from: MARCH - DAY,
      to: NOW - 10 * HOUR,
    });
    await insertPeriod(db(), {
      accountId: orgId,
      resourceId: agentId,
      from: NOW - 10 * HOUR,
      to: null,
      state: 'stopped',
    });
    // A slot held since the second day of the month.
    await insertSlot(db(), { accountId: orgId, from: MARCH + DAY, to: null });

    const res = await owner.call(getUpcomingInvoice, { params: { id: orgId } });
    expect(res.status).toBe(200);
    const upcoming = res.body as UpcomingInvoice;
    expect(upcoming).toMatchObject({
      accountId: orgId,
      currency: 'EUR',
      minorUnitDigits: 2,
      periodStart: new Date(MARCH).toISOString(),
      periodEnd: new Date(APRIL).toISOString(),
    });
    const asOf = sec(Date.parse(upcoming.asOf));
    expect(asOf).toBeGreaterThanOrEqual(sec(NOW));
    const month = sec(APRIL) - sec(MARCH);
    const slotSeconds = asOf - sec(MARCH + DAY);
    const running = sec(NOW - 10 * HOUR) - sec(MARCH);
    const paused = asOf - sec(NOW - 10 * HOUR);
    expect(upcoming.lines).toEqual([
      expect.objectContaining({
        kind: 'slot',
        quantity: 1,
        seconds: slotSeconds,
        unitAmount: 1200,
        amount: halfUp(slotSeconds * 1200, month),
      }),
      expect.objectContaining({
        kind: 'metered',
        rate: 'running',
        resourceId: agentId,
        description: expect.stringContaining(AGENT_NAME),
        seconds: running,
        unitAmount: 4,
        amount: halfUp(running * 4, 3600),
      }),
      expect.objectContaining({ kind: 'metered', rate: 'paused', seconds: paused, unitAmount: 4 }),
    ]);
    expect(upcoming.total).toBe(upcoming.lines.reduce((sum, line) => sum + line.amount, 0));
    // If nothing changes: the slot and the stopped Agent run on to April, where the Agent's
    // metered lines meet the cell's monthly cap (2,880).
    const slotToEnd = halfUp((sec(APRIL) - sec(MARCH + DAY)) * 1200, month);
    const meteredToEnd =
      halfUp(running * 4, 3600) + halfUp((sec(APRIL) - sec(NOW - 10 * HOUR)) * 4, 3600);
    expect(meteredToEnd).toBeGreaterThan(2880);
    expect(upcoming.projectedTotal).toBe(slotToEnd + 2880);

    expect((await admin.call(getUpcomingInvoice, { params: { id: orgId } })).status).toBe(200);
    const refused = await member.callError(getUpcomingInvoice, { params: { id: orgId } });
    expect([refused.status, refused.body.error]).toEqual([403, 'forbidden']);
    const hidden = await stranger.callError(getUpcomingInvoice, { params: { id: orgId } });
    expect([hidden.status, hidden.body.error]).toEqual([404, 'not_found']);
  });

  it('closes each finished month into one numbered invoice per account, once', async () => {
    // The stranger's own account: an hour in March; another account with only an error period
    // (nothing charged) gets no invoice.
    await insertPeriod(db(), {
      accountId: strangerAccountId,
      resourceId: randomUUID(),
      from: MARCH + HOUR,
      to: MARCH + 2 * HOUR,
    });
    const nothing = t.newClient();
    const nothingId = (await signUpUser(nothing)).account.id;
    await insertPeriod(db(), {
      accountId: nothingId,
      resourceId: randomUUID(),
      from: MARCH,
      to: MARCH + HOUR,
      state: 'error',
    });

    // March is not over: nothing to close but February (the ledger's first month: a day).
    setNow(APRIL + 2 * 60_000);
    await t.ctx.billing.closePeriods();
    const early = await db().selectFrom('invoices').select('periodStart').execute();
    expect(early.map((i) => i.periodStart.toISOString())).toEqual([
      new Date(FEBRUARY).toISOString(),
    ]);
    setNow(APRIL + 10 * 60_000);
    await t.ctx.billing.closePeriods();
    // Again, and twice at once: nothing more.
    await Promise.all([t.ctx.billing.closePeriods(), t.ctx.billing.closePeriods()]);

    const all = await db().selectFrom('invoices').selectAll().orderBy('number').execute();
    expect(all.map((i) => [i.number, i.accountId, i.periodStart.toISOString()])).toEqual([
      [1, orgId, new Date(FEBRUARY).toISOString()],
      ...[
        [orgId, new Date(MARCH).toISOString()],
        [strangerAccountId, new Date(MARCH).toISOString()],
      ]
        .sort(([a], [b]) => (a as string).localeCompare(b as string))
        .map(([account, start], i) => [i + 2, account, start]),
    ]);
    const counter = await db().selectFrom('invoiceCounter').selectAll().executeTakeFirstOrThrow();
    expect(counter).toMatchObject({ lastNumber: 3, closedThrough: new Date(APRIL) });
    // Each issue enqueued its collection in the same transaction.
    const collected = await sql<{ number: number }>`select (data->>'number')::int as number
      from pgboss.job where name = ${collectInvoice.name} order by 1`.execute(db());
    expect(collected.rows.map((row) => row.number)).toEqual([1, 2, 3]);
  });

  it('lists, shows and prints the invoices to owners and admins; another account’s is 404', async () => {
    const list = await owner.call(listInvoices, { params: { id: orgId } });
    expect(list.status).toBe(200);
    const summaries = list.body as InvoiceSummary[];
    expect(summaries.map((s) => s.periodStart)).toEqual([
      new Date(MARCH).toISOString(),
      new Date(FEBRUARY).toISOString(),
    ]);
    const march = summaries[0] as InvoiceSummary;
    expect(march).toMatchObject({ status: 'open', currency: 'EUR', paidAt: null });
    expect(Date.parse(march.dueAt) - Date.parse(march.issuedAt)).toBe(14 * DAY);

    const shown = await admin.call(getInvoice, { params: { id: orgId, number: march.number } });
    expect(shown.status).toBe(200);
    const invoice = shown.body as Invoice;
    expect(invoice.lines.map((line) => line.kind)).toEqual(['slot', 'metered', 'metered', 'cap']);
    expect(invoice.total).toBe(invoice.lines.reduce((sum, line) => sum + line.amount, 0));
    expect(invoice.total).toBe(march.total);

    const strangers = (await stranger.call(listInvoices, { params: { id: strangerAccountId } }))
      .body as InvoiceSummary[];
    const theirs = strangers[0]?.number as number;
    expect(
      (await owner.callError(getInvoice, { params: { id: orgId, number: theirs } })).status,
    ).toBe(404);
    expect(
      (await owner.callError(getInvoicePage, { params: { id: orgId, number: theirs } })).status,
    ).toBe(404);
    expect(
      (await owner.callError(getInvoice, { params: { id: orgId, number: '999' } })).status,
    ).toBe(404);
    expect(
      (
        await stranger.callError(getInvoice, {
          params: { id: strangerAccountId, number: march.number },
        })
      ).status,
    ).toBe(404);
    // The account's three invoice endpoints: a member is refused, a stranger finds nothing.
    const one = { params: { id: orgId, number: march.number } };
    for (const [as, status] of [
      [member, 403],
      [stranger, 404],
    ] as const) {
      expect((await as.callError(listInvoices, { params: { id: orgId } })).status).toBe(status);
      expect((await as.callError(getInvoice, one)).status).toBe(status);
      expect((await as.callError(getInvoicePage, one)).status).toBe(status);
    }

    const page = await owner.send(getInvoicePage, { params: { id: orgId, number: march.number } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = page.body as string;
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<i>');
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62; &#38; &#34;Co&#34;');
    expect(html).toContain('&#60;i&#62;meter&#60;/i&#62; &#38; &#34;me&#34;');
    expect(html).toContain(`Invoice ${march.number}`);
    const euros = new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR' });
    expect(html).toContain(euros.format(march.total / 100));
    expect(html).toContain(march.dueAt.slice(0, 10));
    expect(html).toContain('@media print');
  });

  it('BILLING_PROVIDER=none: overdue makes past due, then inactive; paid makes active again', async () => {
    await db()
      .updateTable('accounts')
      .set({ subscriptionStatus: 'active' })
      .where('id', 'in', [orgId, strangerAccountId])
      .execute();
    const [february, march] = (await owner.call(listInvoices, { params: { id: orgId } })).body
      .map((s: InvoiceSummary) => s)
      .reverse() as InvoiceSummary[];
    const due = Date.parse((march as InvoiceSummary).dueAt);

    // Not yet due: nothing moves.
    setNow(due - HOUR);
    await t.ctx.billing.runDunning();
    expect(await statusOf(orgId)).toBe('active');
    setNow(due + HOUR);
    await t.ctx.billing.runDunning();
    expect(await statusOf(orgId)).toBe('past_due');
    expect(await statusOf(strangerAccountId)).toBe('past_due');
    // Each account's owners and admins are told, once, by the notice the move enqueued.
    const pastDue = (accountId: string) =>
      db()
        .selectFrom('noticeEvents')
        .select('kind')
        .where('accountId', '=', accountId)
        .where('kind', '=', 'subscription_past_due')
        .execute();
    for (const id of [orgId, strangerAccountId]) {
      await waitFor(async () => (await pastDue(id)).length > 0, 15_000, 'the past-due notice');
      expect(await pastDue(id)).toHaveLength(1);
    }

    // The operator records the payments: one overdue invoice is left, then none.
    const paid = (await runAdminCommand(t.ctx, 'invoice paid', {
      number: String(february?.number),
    })) as InvoiceSummary;
    expect(paid).toMatchObject({ status: 'paid', paidAt: expect.any(String) });
    expect(await statusOf(orgId)).toBe('past_due');
    await runAdminCommand(t.ctx, 'invoice paid', { number: String(march?.number) });
    expect(await statusOf(orgId)).toBe('active');
    await expect(
      runAdminCommand(t.ctx, 'invoice paid', { number: String(march?.number) }),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(runAdminCommand(t.ctx, 'invoice paid', { number: '999' })).rejects.toMatchObject({
      code: 'not_found',
    });
    const listed = (await runAdminCommand(t.ctx, 'invoice list', { account: orgSlug })) as {
      number: number;
      status: string;
      accountSlug: string;
    }[];
    expect(listed.map((i) => [i.number, i.status, i.accountSlug])).toEqual([
      [march?.number, 'paid', orgSlug],
      [february?.number, 'paid', orgSlug],
    ]);

    // Past the grace period (7 days): the stranger's unpaid one ends the subscription.
    setNow(due + 7 * DAY + HOUR);
    await t.ctx.billing.runDunning();
    expect(await statusOf(strangerAccountId)).toBe('inactive');
    expect(await statusOf(orgId)).toBe('active');

    const events = await db()
      .selectFrom('auditEvents')
      .select(['accountId', 'action', 'resourceId', 'data', 'actorUserId'])
      .where('accountId', 'in', [orgId, strangerAccountId])
      .where('action', 'in', ['account.subscription', 'account.invoice_paid'])
      .orderBy('createdAt')
      .execute();
    const described = events.map((e) => {
      const data = (typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as {
        status?: string;
        number?: number;
      };
      return [e.accountId === orgId ? 'org' : 'stranger', e.action, data.status ?? data.number];
    });
    // The last payment and the standing it restores are recorded in one transaction.
    const ofOrg = described.filter(([who]) => who === 'org');
    expect(ofOrg.slice(0, 2)).toEqual([
      ['org', 'account.subscription', 'past_due'],
      ['org', 'account.invoice_paid', february?.number],
    ]);
    expect(ofOrg.slice(2)).toEqual(
      expect.arrayContaining([
        ['org', 'account.invoice_paid', march?.number],
        ['org', 'account.subscription', 'active'],
      ]),
    );
    expect(ofOrg).toHaveLength(4);
    expect(described.filter(([who]) => who === 'stranger')).toEqual([
      ['stranger', 'account.subscription', 'past_due'],
      ['stranger', 'account.subscription', 'inactive'],
    ]);
    expect(events.every((e) => e.actorUserId === null)).toBe(true);
    // And the log says each move once, by the dunning job or the operator's payment alike.
    const logged = t.logs
      .entries()
      .filter((entry) => entry.cause === 'invoices' && entry.accountId === orgId)
      .map((entry) => [entry.level, entry.from, entry.to]);
    expect(logged).toEqual([
      [30, 'active', 'past_due'],
      [30, 'past_due', 'active'],
    ]);
  });

  it('with BILLING_PROVIDER=stripe the dunning job leaves subscriptions to the processor', async () => {
    const job = t.ctx.jobDefinitions.find((d) => d.name === dunning.name);
    expect(job).toBeDefined();
    const { invoicesJobs } = await import('./invoices.jobs.js');
    let ran = 0;
    const [, stripeDunning] = invoicesJobs({
      billing: {
        closePeriods: async () => ({ months: [], issued: 0, existing: 0 }),
        runDunning: async () => {
          ran += 1;
          return { active: 0, past_due: 0, inactive: 0 };
        },
      },
      processor: { subscriptionsFollowInvoices: false },
    });
    await stripeDunning?.run(
      {},
      { id: 'x', signal: new AbortController().signal, isLastAttempt: true },
    );
    expect(ran).toBe(0);
  });
});
