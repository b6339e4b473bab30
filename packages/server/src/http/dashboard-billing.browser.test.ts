import {
  callEndpoint,
  createOrg,
  type Endpoint,
  type EndpointCallInput,
  getMe,
  getPrices,
  getUpcomingInvoice,
  listInvoices,
  type PriceBook,
  type PriceCell,
} from '@svc/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  openPage,
  screenshot,
  signInInBrowser,
  signUpInBrowser,
  watchErrors,
} from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { joinOrganization } from '../../test/mailed-links.js';
import { signUpUser } from '../../test/test-context.js';

/**
 * Money in Chromium: the create form's prices from the price book, the price shown before a
 * subscription is activated, then a subscription Agent's slot with its price and saving, and the
 * running bill's lines and total; a member sees the page without the money.
 */
describe('the billing pages in Chromium', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let book: PriceBook;
  const email = `lin-${Date.now()}@example.com`;
  const password = 'correct horse battery';
  const status = (value: string) => page.locator(`.page-head .badge[data-status="${value}"]`);

  // The dashboard formats in the reader's locale; this browser's is en-US, like this process.
  const money = (amount: number) =>
    new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: book.currency,
      minimumFractionDigits: book.minorUnitDigits,
    }).format(amount / 10 ** book.minorUnitDigits);
  const cell = (product: PriceCell['product'], size: string, region: string) => {
    const found = book.prices.find(
      (p) => p.product === product && p.size === size && p.region === region,
    );
    if (!found) throw new Error(`no price for ${product} ${size} ${region}`);
    return found;
  };
  const label = (text: string) => page.locator('fieldset.choices label', { hasText: text });
  /** Calls an endpoint as the page's browser does (its session cookie), typed by the descriptor. */
  const asPage = <E extends Endpoint>(endpoint: E, input?: EndpointCallInput<E>) =>
    callEndpoint(endpoint, input, {
      baseUrl: server.baseUrl,
      transport: async (url, init) => {
        const res = await page.request.fetch(url, {
          method: init.method,
          headers: init.headers,
          ...(init.body !== undefined && { data: init.body }),
        });
        return { status: res.status(), text: () => res.text() };
      },
    });

  beforeAll(async () => {
    server = await startDashboardServer();
    book = (await server.t.newClient().call(getPrices)).body;
    ({ browser, page, errors } = await openPage());
    await signUpInBrowser(page, server.baseUrl, { name: 'Lin Wei', email, password });
  }, 90_000);
  // Each step answers for its own console errors (a failed step's stay with it).
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the price book's prices of the chosen size and region on the create-Agent form", async () => {
    await page.getByRole('link', { name: 'New Agent' }).click();
    await page.getByLabel('Region').selectOption('us');
    await page.getByLabel('Size').selectOption('medium');
    const medium = cell('agent', 'medium', 'us');
    expect(medium.monthlyCap).not.toBeNull();
    await expect
      .poll(() => label('Metered').innerText())
      .toBe(
        `Metered (pay for what runs) — ${money(medium.hourly)}/hour, at most ${money(medium.monthlyCap ?? 0)}/month`,
      );
    await expect
      .poll(() => label('Subscription slot').innerText())
      .toBe(`Subscription slot — ${money(medium.monthly)}/month (needs an active subscription)`);
    await page.getByText('Prices of a medium Agent in United States.').waitFor();
    await screenshot(page, 'dashboard-create-agent-prices');

    // Another cell, other prices.
    await page.getByLabel('Region').selectOption('eu');
    await page.getByLabel('Size').selectOption('large');
    const large = cell('agent', 'large', 'eu');
    await expect
      .poll(() => label('Subscription slot').innerText())
      .toContain(`— ${money(large.monthly)}/month`);
    await expect.poll(() => label('Metered').innerText()).toContain(`${money(large.hourly)}/hour`);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('shows what the subscription costs before activating it, and activates it on confirmation', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    const state = page.getByTestId('subscription-state');
    await expect.poll(() => state.innerText()).toContain('is inactive');
    await page.getByRole('button', { name: 'Activate subscription' }).click();
    await page.getByRole('heading', { name: 'What the subscription costs' }).waitFor();
    await page.getByText('each slot is charged by the second it is held').waitFor();
    const table = page.getByRole('table', { name: 'Slot prices' });
    for (const [product, name] of [
      ['agent', 'Agent'],
      ['plain_vm', 'Plain VM'],
    ] as const) {
      for (const size of ['small', 'medium', 'large']) {
        const row = table.getByRole('row', { name: `${name} ${size}` });
        await expect
          .poll(() => row.innerText())
          .toBe(
            `${name} ${size}\t${money(cell(product, size, 'us').monthly)}\t${money(cell(product, size, 'eu').monthly)}`,
          );
      }
    }
    await screenshot(page, 'dashboard-billing-activation');
    // Nothing happened yet: the price is shown, not charged.
    expect(await subscriptionStatus()).toBe('inactive');

    await page.getByRole('button', { name: 'Confirm activation' }).click();
    await expect.poll(() => state.innerText()).toContain('is active');
    expect(await subscriptionStatus()).toBe('active');
    await page.getByRole('button', { name: 'Deactivate subscription' }).waitFor();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('creates a subscription Agent; its slot, the saving of removing it and the running bill show', async () => {
    const small = cell('agent', 'small', 'eu');
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'New Agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ledger Bot');
    await page.getByLabel('Region').selectOption('eu');
    await page.getByLabel('Size').selectOption('small');
    await page.getByLabel(/^Subscription slot/).check();
    await page.getByRole('button', { name: 'Create Agent' }).click();
    await page.getByRole('heading', { name: 'Ledger Bot' }).waitFor();
    await status('running').waitFor({ timeout: 20_000 });
    // From here time moves only when the test says: the page and the test read the same bill.
    server.t.clock.freeze();
    await page.getByText('Billed as subscription').waitFor();
    await expect
      .poll(() => page.getByTestId('billing-prices').innerText())
      .toBe(
        `Metered: ${money(small.hourly)}/hour, at most ${money(small.monthlyCap ?? 0)}/month. Subscription: a ${money(small.monthly)}/month slot (small, eu), charged by the second it is held; a free one is taken first.`,
      );
    // Two hours on its slot, then metered (the slot stays, free) for one more.
    server.t.clock.advance(2 * 3_600_000);
    await page.getByRole('button', { name: 'Switch to metered' }).click();
    await page.getByText('Billed as metered').waitFor();
    server.t.clock.advance(3_600_000);

    await page.getByRole('link', { name: 'Billing' }).click();
    const slot = page.getByRole('table', { name: 'Slots' }).getByRole('row', { name: /Agent/ });
    await expect.poll(() => slot.innerText()).toMatch(/^Agent\s+small\s+eu\s+free\s/);
    expect(await slot.innerText()).toContain(`free\t${money(small.monthly)}/month\t`);
    await slot
      .getByRole('button', { name: `Remove slot — saves ${money(small.monthly)}/month` })
      .waitFor();

    // The running bill as the service computes it, shown line by line with its total.
    const bill = await upcomingInvoice();
    expect(bill.lines.map((line) => line.kind).sort()).toEqual(['metered', 'slot']);
    expect(bill.total).toBe(bill.lines.reduce((sum, line) => sum + line.amount, 0));
    const facts = page.getByTestId('running-bill');
    await expect.poll(() => facts.innerText()).toContain(`Cost so far\n${money(bill.total)}`);
    await expect
      .poll(() => facts.innerText())
      .toContain(`Projected\n${money(bill.projectedTotal)}`);
    const lines = page.getByRole('table', { name: 'Invoice lines' });
    const rows = lines.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(bill.lines.length);
    for (const [index, line] of bill.lines.entries()) {
      const text = await rows.nth(index).innerText();
      expect(text.startsWith(line.description), text).toBe(true);
      expect(text.endsWith(money(line.amount)), text).toBe(true);
    }
    await expect.poll(() => lines.locator('tfoot').innerText()).toBe(`Total\t${money(bill.total)}`);
    await page.getByText('No invoices yet.').waitFor();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it("closes the month into an invoice, listed with its printable page; removing the slot lowers the next month's projection", async () => {
    // Into the next month, past the close's delay, and the period close the hourly job runs.
    const now = server.t.clock.now();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    server.t.clock.advance(nextMonth - now.getTime() + 10 * 60_000);
    await server.t.ctx.billing.closePeriods();

    await page.reload();
    const [invoice, ...older] = await asPage(listInvoices, { params: { id: await accountId() } });
    expect(older).toEqual([]);
    if (!invoice) throw new Error('no invoice was issued');
    expect(invoice.status).toBe('open');
    const month = new Intl.DateTimeFormat('en-US', { month: 'short', timeZone: 'UTC' }).format(
      new Date(invoice.periodStart),
    );
    const row = page.getByRole('table', { name: 'Invoices' }).getByRole('row', {
      name: new RegExp(`^${invoice.number}\\b`),
    });
    await expect.poll(() => row.innerText()).toContain(`\t${money(invoice.total)}\topen\t`);
    expect(await row.innerText()).toContain(month);
    // The page from its first section: the bill, the slots and the invoices in one view.
    await page
      .getByRole('heading', { name: 'Subscription', exact: true })
      .evaluate((heading) => heading.scrollIntoView());
    await screenshot(page, 'dashboard-billing');

    await row.getByRole('link', { name: `Print invoice ${invoice.number}` }).click();
    await page.waitForURL(new RegExp(`/invoices/${invoice.number}/print$`));
    await expect.poll(() => page.locator('body').innerText()).toContain(money(invoice.total));
    await page.goBack();

    // Removing the free slot: the minutes it was held this month stay on the bill, the rest of
    // the month leaves the projection.
    const before = await upcomingInvoice();
    const slot = page.getByRole('table', { name: 'Slots' }).getByRole('row', { name: /Agent/ });
    await slot.getByRole('button', { name: 'Remove slot' }).click();
    await slot.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('No slots.', { exact: false }).waitFor();
    const after = await upcomingInvoice();
    expect(after.projectedTotal).toBeLessThan(before.projectedTotal);
    await expect
      .poll(() => page.getByTestId('running-bill').innerText())
      .toContain(`Projected\n${money(after.projectedTotal)}`);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('shows a member the billing page without the bill and the invoices, and no error', async () => {
    const owner = server.t.newClient();
    await signUpUser(owner);
    const org = await owner.call(createOrg, { body: { name: 'Mill Street', slug: 'mill-street' } });
    const memberClient = server.t.newClient();
    const member = await signUpUser(memberClient, { name: 'Member Mo' });
    await joinOrganization(server.t, {
      owner,
      orgId: org.body.id,
      member: memberClient,
      email: member.user.email,
      role: 'member',
    });

    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const other = await context.newPage();
    const otherErrors = watchErrors(other);
    try {
      await signInInBrowser(other, server.baseUrl, { email: member.user.email, password });
      await other.goto(`${server.baseUrl}/dashboard/accounts/mill-street/billing`);
      await other.getByRole('heading', { name: 'Billing' }).waitFor();
      await other.getByText('Owners and admins see this month’s bill and the invoices.').waitFor();
      await other.getByText('Owners and admins manage the subscription.').waitFor();
      await other.getByRole('heading', { name: 'Usage this month' }).waitFor();
      await other.getByText('No slots.', { exact: false }).waitFor();
      expect(await other.getByRole('heading', { name: 'Invoices', exact: true }).count()).toBe(0);
      expect(await other.getByRole('heading', { name: 'This month', exact: true }).count()).toBe(0);
      expect(await other.getByRole('alert').count()).toBe(0);
      await screenshot(other, 'dashboard-billing-member');
      expect(otherErrors, otherErrors.join('\n')).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  async function personalAccount() {
    const me = await asPage(getMe);
    const account = me.accounts.find((a) => a.kind === 'personal');
    if (!account) throw new Error('the signed-in user has no personal account');
    return account;
  }

  async function subscriptionStatus() {
    return (await personalAccount()).subscriptionStatus;
  }

  async function accountId() {
    return (await personalAccount()).id;
  }

  async function upcomingInvoice() {
    return asPage(getUpcomingInvoice, { params: { id: await accountId() } });
  }
});
