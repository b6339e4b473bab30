import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_LAUNCHER } from '../../test/admin-cli.js';
import { TEST_ENV } from '../../test/test-context.js';
import { createTestDatabase, parentEnv, type TestDatabase, testEnv } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { defaultPriceBook } from '../config/price-book.js';
import { collectInvoice } from './billing.job-types.js';
import { accountLedger } from './ledger.repo.js';
import { billLines, monthStart, totalOf } from './money.js';
import { CLOSE_DELAY_MS } from './period-close.js';

// The period close in real processes on PostgreSQL (`npm run admin -- invoices close`, as an
// operator runs it): killed with SIGKILL while it issues, then run again, and twice at once. After
// all of it: exactly one invoice per account and month, numbered 1…N without a gap, lines that sum
// to their totals and match the ledger, one collection job per invoice.

/** Accounts with something to bill; each gets an invoice for two months. */
const ACCOUNTS = 400;
const HOUR = 3_600_000;

/** The last closable month's end, and the two months before it that hold the ledger. */
const closableEnd = monthStart(new Date(Date.now() - CLOSE_DELAY_MS));
const lastMonth = monthStart(new Date(closableEnd.getTime() - 1));
const monthBefore = monthStart(new Date(lastMonth.getTime() - 1));

if (!testEnv.TEST_DATABASE_URL) {
  // Without PostgreSQL there is no second process on one database (PGlite is one process's):
  // the file fails, saying so, rather than skip.
  it('needs TEST_DATABASE_URL (PostgreSQL)', () => {
    throw new Error('TEST_DATABASE_URL is unset: the period close under SIGKILL did not run');
  });
}

if (testEnv.TEST_DATABASE_URL)
  describe('the period close under SIGKILL and double runs', () => {
    let test: TestDatabase;
    let dataDir: string;
    const db = () => test.database.db;
    const prices = defaultPriceBook();

    beforeAll(async () => {
      test = await createTestDatabase('postgres');
      dataDir = await mkdtemp(path.join(tmpdir(), 'svc-close-'));
      // Every account: an Agent metered from the middle of the month before to the middle of the
      // last one, in one or two periods; every third one holds a slot as well. And accounts with
      // only an error period, which are on the ledger but get no invoice.
      await sql`insert into accounts (id, slug, name, kind, created_at, updated_at)
      select gen_random_uuid(), 'billed-' || i, 'Billed ' || i, 'organization', now(), now()
      from generate_series(1, ${ACCOUNTS + 20}) i`.execute(db());
      const from = new Date(monthBefore.getTime() + 14 * 24 * HOUR);
      const split = new Date(lastMonth.getTime() + 3 * HOUR);
      const to = new Date(lastMonth.getTime() + 14 * 24 * HOUR);
      await sql`insert into usage_periods
        (id, resource_kind, resource_id, account_id, state, billing_type, size, region, started_at, ended_at)
      select gen_random_uuid(), 'agent', a.id, a.id, p.state, 'metered', 'medium', 'eu',
        p.started_at + (a.n % 97) * interval '1 minute', p.ended_at - (a.n % 89) * interval '1 second'
      from (select id, row_number() over (order by id) as n from accounts) a
      cross join lateral (values
        ('running', ${from}::timestamptz, ${split}::timestamptz),
        (case when a.n % 2 = 0 then 'stopped' else 'running' end, ${split}::timestamptz, ${to}::timestamptz)
      ) as p(state, started_at, ended_at)
      where a.n <= ${ACCOUNTS}`.execute(db());
      await sql`insert into usage_periods
        (id, resource_kind, resource_id, account_id, state, billing_type, size, region, started_at, ended_at)
      select gen_random_uuid(), 'agent', a.id, a.id, 'error', 'metered', 'small', 'eu', ${from}, ${to}
      from (select id, row_number() over (order by id) as n from accounts) a
      where a.n > ${ACCOUNTS}`.execute(db());
      await sql`insert into subscription_slots (id, account_id, product, size, region, created_at, removed_at)
      select gen_random_uuid(), a.id, 'agent', 'small', 'us', ${from}, null
      from (select id, row_number() over (order by id) as n from accounts) a
      where a.n <= ${ACCOUNTS} and a.n % 3 = 0`.execute(db());
    }, 120_000);
    afterAll(async () => {
      await test?.database.close();
      await test?.drop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    /** `npm run admin -- invoices close` on the test's database, with no service running. */
    const closeInChild = (): ChildProcess =>
      spawn(process.execPath, [ADMIN_LAUNCHER, 'invoices', 'close'], {
        env: {
          ...parentEnv(),
          ...TEST_ENV,
          LOG_LEVEL: 'silent',
          DATA_DIR: dataDir,
          DATABASE_URL: test.url as string,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
    const exitOf = (child: ChildProcess) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
    const invoiceCount = async () =>
      Number(
        (
          await db()
            .selectFrom('invoices')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    /** Invoice numbers 1…count, each invoice's lines summing to its total. */
    async function expectWhole(count: number) {
      const numbers = await db()
        .selectFrom('invoices')
        .select('number')
        .orderBy('number')
        .execute();
      expect(numbers.map((row) => row.number)).toEqual(
        Array.from({ length: count }, (_, i) => i + 1),
      );
      const mismatched = await sql<{ number: number }>`select i.number from invoices i
      left join invoice_lines l on l.invoice_number = i.number
      group by i.number, i.total
      having coalesce(sum(l.amount), -1) <> i.total
        or count(l.*) <> coalesce(max(l.position) + 1, 0)`.execute(db());
      expect(mismatched.rows).toEqual([]);
    }

    it('killed mid-way, run again and twice at once: one invoice per account and month, no gaps', async () => {
      const expected = 2 * ACCOUNTS;

      const first = closeInChild();
      const firstExit = exitOf(first);
      // Killed once an eighth of the invoices are issued: in the middle of the first month.
      await waitFor(async () => (await invoiceCount()) >= expected / 8, 60_000, 'invoices issued');
      first.kill('SIGKILL');
      expect((await firstExit).signal).toBe('SIGKILL');
      const afterKill = await invoiceCount();
      expect(afterKill).toBeGreaterThan(0);
      // Killed mid-way: what it issued is whole, the rest is left.
      expect(afterKill).toBeLessThan(expected);
      await expectWhole(afterKill);

      const both = [closeInChild(), closeInChild()];
      const exits = await Promise.all(both.map(exitOf));
      expect(exits).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null },
      ]);
      const again = closeInChild();
      expect(await exitOf(again)).toEqual({ code: 0, signal: null });

      await expectWhole(expected);
      const perAccount = await sql<{ accountId: string; periods: string[] }>`select
        account_id as "accountId", array_agg(period_start::text order by period_start) as periods
      from invoices group by account_id`.execute(db());
      expect(perAccount.rows).toHaveLength(ACCOUNTS);
      expect(perAccount.rows.every((row) => row.periods.length === 2)).toBe(true);
      const counter = await db().selectFrom('invoiceCounter').selectAll().executeTakeFirstOrThrow();
      expect(counter).toEqual({ id: true, lastNumber: expected, closedThrough: closableEnd });

      // Every invoice is what its account's ledger comes to.
      const invoices = await db()
        .selectFrom('invoices')
        .select(['accountId', 'periodStart', 'periodEnd', 'total'])
        .execute();
      for (const invoice of invoices) {
        const { periods, slots } = await accountLedger(
          db(),
          invoice.accountId,
          invoice.periodStart,
          invoice.periodEnd,
        );
        const lines = billLines(prices, { ...invoice, asOf: invoice.periodEnd }, periods, slots);
        expect(Number(invoice.total)).toBe(totalOf(lines));
      }

      // One collection job per invoice, enqueued with it.
      const jobs = await sql<{ number: number }>`select (data->>'number')::int as number
      from pgboss.job where name = ${collectInvoice.name} order by 1`.execute(db());
      expect(jobs.rows.map((row) => row.number)).toEqual(
        Array.from({ length: expected }, (_, i) => i + 1),
      );
    }, 240_000);
  });
