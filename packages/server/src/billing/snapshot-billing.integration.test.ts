import { randomUUID } from 'node:crypto';
import {
  createAgent,
  getAgent,
  getInvoice,
  getInvoicePage,
  getUpcomingInvoice,
  type InvoiceLine,
  listInvoices,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import type { Executor } from '../db/database.js';
import { rolloverMachineSnapshotsUsage, rolloverSnapshotUsage } from './snapshot-usage.repo.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MARCH = Date.UTC(2026, 2, 1);
const APRIL = Date.UTC(2026, 3, 1);
/** The service's "now" at first: mid-March 2026 (a 31-day month). */
const NOW = Date.UTC(2026, 2, 15, 12);
const GB = 1_000_000_000;
/** The embedded book's snapshot storage price: 1 cent a GB-month. */
const PRICE = 1;
const MONTH_SECONDS = (APRIL - MARCH) / 1000;

const sec = (ms: number) => Math.floor(ms / 1000);
/** The amount of `byteSeconds` at PRICE, rounded half up (the bill's rule). */
const amountOf = (byteSeconds: bigint) => {
  const d = BigInt(GB) * BigInt(MONTH_SECONDS);
  return Number((2n * byteSeconds * BigInt(PRICE) + d) / (2n * d));
};
const snapshotLines = (lines: readonly InvoiceLine[]) => lines.filter((l) => l.kind === 'snapshot');

describe.each(databaseKinds)('Snapshot storage on the bill on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let other: TestClient;
  let accountId: string;
  let otherAccountId: string;
  let agentId: string;
  const setNow = (at: number) => t.clock.advance(at - t.clock.now().getTime());
  const db = () => t.ctx.database.db;
  // Snapshots as the snapshot service writes them: the row, then the rollover, in one transaction.
  const inTx = (fn: (tx: Executor) => Promise<void>) => t.ctx.database.transaction(fn);
  const insertSnapshot = (
    tx: Executor,
    fields: { id: string; name: string; status: 'creating' | 'ready' | 'failed'; size?: number },
  ) =>
    tx
      .insertInto('machineSnapshots')
      .values({
        id: fields.id,
        machineKind: 'agent',
        machineId: agentId,
        accountId,
        name: fields.name,
        kind: 'manual',
        status: fields.status,
        sizeBytes: fields.size ?? null,
        provider: 'local',
        readyAt: null,
        deletedAt: null,
      })
      .execute();
  const makeReady = (tx: Executor, id: string, size: number, at: number) =>
    tx
      .updateTable('machineSnapshots')
      .set({ status: 'ready', sizeBytes: size, readyAt: new Date(at) })
      .where('id', '=', id)
      .execute();

  const a = randomUUID();
  const b = randomUUID();
  const A_READY = MARCH + 2 * DAY + 400;
  const A_DELETED = MARCH + 9 * DAY + 900;
  const B_READY = MARCH + 11 * DAY + 6 * HOUR;
  const TRANSFER = NOW + DAY;

  beforeAll(async () => {
    t = await createTestContext(kind);
    setNow(NOW);
    owner = t.newClient();
    accountId = (await signUpUser(owner)).account.id;
    other = t.newClient();
    otherAccountId = (await signUpUser(other)).account.id;
    const created = await owner.call(createAgent, {
      body: { name: 'snappy', size: 'small', region: 'us', billingType: 'metered', accountId },
    });
    expect(created.status).toBe(201);
    agentId = created.body.id;
    await waitFor(
      async () =>
        (await owner.call(getAgent, { params: { id: agentId } })).body.status === 'running',
      15_000,
      'running',
    );
    // Only snapshot storage is billed here.
    await db().deleteFrom('usagePeriods').execute();
  });
  afterAll(() => t?.close());

  it('charges a snapshot from ready to delete, and one still held up to now, on the running bill', async () => {
    // A: 500 GB, taken, ready on the 3rd, deleted on the 10th.
    await inTx(async (tx) => {
      await insertSnapshot(tx, { id: a, name: 'a', status: 'creating' });
      // Still creating: nothing stored yet.
      await rolloverSnapshotUsage(tx, a, new Date(A_READY - 60_000));
      await makeReady(tx, a, 500 * GB, A_READY);
      await rolloverSnapshotUsage(tx, a, new Date(A_READY));
    });
    await inTx(async (tx) => {
      await tx
        .updateTable('machineSnapshots')
        .set({ deletedAt: new Date(A_DELETED) })
        .where('id', '=', a)
        .execute();
      await rolloverSnapshotUsage(tx, a, new Date(A_DELETED));
    });
    // B: 200 GB, ready on the 12th, held. A failed one and one still being taken cost nothing.
    await inTx(async (tx) => {
      await insertSnapshot(tx, { id: b, name: 'b', status: 'creating' });
      await makeReady(tx, b, 200 * GB, B_READY);
      await rolloverSnapshotUsage(tx, b, new Date(B_READY));
      const failed = randomUUID();
      await insertSnapshot(tx, { id: failed, name: 'failed', status: 'failed', size: 9 * GB });
      await rolloverSnapshotUsage(tx, failed, new Date(B_READY));
      const creating = randomUUID();
      await insertSnapshot(tx, { id: creating, name: 'creating', status: 'creating' });
      await rolloverSnapshotUsage(tx, creating, new Date(B_READY));
    });

    const res = await owner.call(getUpcomingInvoice, { params: { id: accountId } });
    expect(res.status).toBe(200);
    const asOf = sec(Date.parse(res.body.asOf));
    const aSeconds = sec(A_DELETED) - sec(A_READY);
    const bSeconds = asOf - sec(B_READY);
    const byteSeconds = BigInt(500 * GB) * BigInt(aSeconds) + BigInt(200 * GB) * BigInt(bSeconds);
    expect(snapshotLines(res.body.lines)).toEqual([
      {
        kind: 'snapshot',
        description: expect.stringMatching(
          /^Snapshot storage, Agent “snappy” \(us\), \d+\.\d{3} GB-months$/,
        ),
        product: 'agent',
        size: 'small',
        region: 'us',
        resourceId: agentId,
        rate: null,
        quantity: 1,
        seconds: aSeconds + bSeconds,
        unitAmount: PRICE,
        amount: amountOf(byteSeconds),
      },
    ]);
    expect(amountOf(byteSeconds)).toBeGreaterThan(100);
    expect(res.body.total).toBe(res.body.lines.reduce((sum, l) => sum + l.amount, 0));
    // If nothing changes, B is held to the month's end.
    const projected =
      BigInt(500 * GB) * BigInt(aSeconds) + BigInt(200 * GB) * BigInt(sec(APRIL) - sec(B_READY));
    expect(res.body.lines).toHaveLength(1);
    expect(res.body.projectedTotal).toBe(amountOf(projected));
  });

  it('splits a transferred snapshot between the accounts at the transfer, on their bills and invoices', async () => {
    setNow(TRANSFER);
    // The machine moves: its snapshots' account with it, and their storage periods roll over.
    await inTx(async (tx) => {
      await tx
        .updateTable('machineSnapshots')
        .set({ accountId: otherAccountId })
        .where('machineId', '=', agentId)
        .execute();
      await rolloverMachineSnapshotsUsage(tx, agentId, new Date(TRANSFER));
    });
    setNow(TRANSFER + DAY);
    const theirs = await other.call(getUpcomingInvoice, { params: { id: otherAccountId } });
    expect(snapshotLines(theirs.body.lines)).toEqual([
      expect.objectContaining({
        // The machine is not theirs (in this test): it is named by its id.
        description: expect.stringMatching(
          new RegExp(`^Snapshot storage, Agent ${agentId.slice(0, 8)} \\(us\\)`),
        ),
        resourceId: agentId,
        quantity: 1,
        seconds: sec(Date.parse(theirs.body.asOf)) - sec(TRANSFER),
      }),
    ]);

    setNow(APRIL + 10 * 60_000);
    await t.ctx.billing.closePeriods();
    const invoiceOf = async (client: TestClient, id: string) => {
      const list = await client.call(listInvoices, { params: { id } });
      expect(list.body).toHaveLength(1);
      const number = list.body[0]?.number as number;
      return (await client.call(getInvoice, { params: { id, number } })).body;
    };
    const ours = await invoiceOf(owner, accountId);
    const aSeconds = sec(A_DELETED) - sec(A_READY);
    const bOurs = sec(TRANSFER) - sec(B_READY);
    expect(snapshotLines(ours.lines)).toEqual([
      expect.objectContaining({
        kind: 'snapshot',
        resourceId: agentId,
        // B went with the machine: none held here at the month's end.
        quantity: 0,
        seconds: aSeconds + bOurs,
        amount: amountOf(BigInt(500 * GB) * BigInt(aSeconds) + BigInt(200 * GB) * BigInt(bOurs)),
      }),
    ]);
    const bTheirs = sec(APRIL) - sec(TRANSFER);
    const theirInvoice = await invoiceOf(other, otherAccountId);
    expect(snapshotLines(theirInvoice.lines)).toEqual([
      expect.objectContaining({
        kind: 'snapshot',
        quantity: 1,
        seconds: bTheirs,
        amount: amountOf(BigInt(200 * GB) * BigInt(bTheirs)),
      }),
    ]);

    const page = await owner.send(getInvoicePage, {
      params: { id: accountId, number: ours.number },
    });
    expect(page.status).toBe(200);
    const html = page.body as string;
    expect(html).toContain('Snapshot storage, Agent “snappy” (us)');
    expect(html).toContain('/ GB-month');
  });
});
