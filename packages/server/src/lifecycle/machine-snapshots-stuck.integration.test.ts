import type { Agent, PlainVm, Snapshot } from '@svc/contract';
import {
  agentSnapshots,
  createAgent,
  getAgent,
  getPlainVm,
  plainVmSnapshots,
  startPlainVm,
  stopAgent,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { AGENT, type MachineKind, PLAIN_VM } from './machine-kinds.js';
import { reconcileMachines } from './machine-reconcile.js';
import { DISK_OPERATION_GIVEN_UP_AFTER_MS, FAILURE_REASON } from './snapshot-jobs.js';

// A snapshot or restore whose job never ends (its driver call hangs here, as a killed worker's
// would never answer) is given up by the reconcile pass once older than the jobs can take, so the
// machine's moves are accepted again; a pass before that leaves it alone.

describe.each(databaseKinds)('a disk operation whose job never ends on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  beforeAll(async () => {
    t = await createTestContext(kind);
    user = t.newClient();
    await signUpUser(user);
  });
  afterAll(() => t?.close());

  const agentNow = async (id: string) =>
    (await user.call(getAgent, { params: { id } })).body as Agent;
  const vmNow = async (id: string) =>
    (await user.call(getPlainVm, { params: { id } })).body as PlainVm;

  /** One reconcile pass of `machine`'s kind, as its `<kind>.reconcile` job runs it. */
  const pass = (machine: MachineKind) =>
    reconcileMachines(
      {
        database: t.ctx.database,
        clock: t.ctx.clock,
        compute: t.compute,
        log: t.ctx.log.root,
        notices: t.ctx.notices,
      },
      { kind: machine, createSpec: () => expect.fail('no create') },
    );

  /** Waits until the driver's snapshot call for server `id` is under way (and hanging). */
  const driverCalled = (id: string) =>
    waitFor(
      () => t.compute.calls.some((c) => c.call === 'snapshots' && c.id === id),
      15_000,
      'the driver called',
    );

  const givenUp = (id: string) =>
    t.logs
      .entries()
      .filter((e) => e.level === 40 && (e.agentId === id || e.plainVmId === id))
      .map((e) => e.msg);

  it('fails a snapshot stuck past the bound, and the Agent stops again', async () => {
    const body = { name: 'stuck', size: 'small', region: 'us', billingType: 'metered' } as const;
    const { id } = (await user.call(createAgent, { body })).body;
    await waitFor(async () => (await agentNow(id)).status === 'running', 15_000, 'running');
    t.compute.behave('snapshots', { hang: true });
    try {
      const made = (await user.call(agentSnapshots.create, { params: { id }, body: {} })).body;
      await driverCalled(id);
      const snapshotNow = async () =>
        (
          (await user.call(agentSnapshots.list, { params: { id } })).body.snapshots as Snapshot[]
        ).find((s) => s.id === made.id);

      // Its job could still be on a retry: left alone.
      t.clock.advance(DISK_OPERATION_GIVEN_UP_AFTER_MS - 60_000);
      await pass(AGENT);
      expect((await agentNow(id)).diskOperation).toBe('snapshot');
      expect((await snapshotNow())?.status).toBe('creating');

      t.clock.advance(2 * 60_000);
      await pass(AGENT);
      expect(await agentNow(id)).toMatchObject({ status: 'running', diskOperation: null });
      expect(await snapshotNow()).toMatchObject({
        status: 'failed',
        failureReason: FAILURE_REASON,
      });
      expect(givenUp(id)).toEqual(['Agent snapshot given up: its job never ended']);
      const row = await t.ctx.database.db
        .selectFrom('agents')
        .select('diskOperationAt')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.diskOperationAt).toBeNull();

      // The driver's call ends after all: its copy belongs to no snapshot and is removed, and
      // the snapshot stays failed.
      t.compute.behave('snapshots', {});
      t.compute.release();
      await waitFor(
        () =>
          t.logs
            .entries()
            .some(
              (e) =>
                e.snapshotId === made.id &&
                e.msg === 'snapshot finished after it was given up: removing its copy',
            ),
        15_000,
        'the late copy removed',
      );
      await waitFor(() => !t.compute.snapshotsHeld.has(`test-${made.id}`), 15_000, 'no copy');
      expect((await snapshotNow())?.status).toBe('failed');
      expect((await agentNow(id)).diskOperation).toBeNull();

      expect((await user.send(stopAgent, { params: { id } })).status).toBe(200);
      await waitFor(async () => (await agentNow(id)).status === 'stopped', 15_000, 'stopped');
    } finally {
      t.compute.behave('snapshots', {});
      t.compute.release();
    }
  });

  it('ends a restore stuck past the bound with restore_failed, and the Plain VM starts again', async () => {
    const id = await runningPlainVm(user, 'stuck-vm', 15_000);
    const made = (
      await user.call(plainVmSnapshots.create, { params: { id }, body: { name: 'before' } })
    ).body;
    await waitFor(
      async () =>
        (await user.call(plainVmSnapshots.list, { params: { id } })).body.snapshots[0]?.status ===
        'ready',
      15_000,
      'ready',
    );
    await user.call(stopPlainVm, { params: { id } });
    await waitFor(async () => (await vmNow(id)).status === 'stopped', 15_000, 'stopped');
    t.compute.behave('snapshots', { hang: true });
    try {
      const calledBefore = t.compute.calls.length;
      await user.call(plainVmSnapshots.restore, { params: { id, snapshotId: made.id } });
      await waitFor(
        () =>
          t.compute.calls.slice(calledBefore).some((c) => c.call === 'snapshots' && c.id === id),
        15_000,
        'the driver called',
      );

      t.clock.advance(DISK_OPERATION_GIVEN_UP_AFTER_MS - 60_000);
      await pass(PLAIN_VM);
      expect((await vmNow(id)).diskOperation).toBe('restore');

      t.clock.advance(2 * 60_000);
      await pass(PLAIN_VM);
      expect(await vmNow(id)).toMatchObject({
        status: 'stopped',
        diskOperation: null,
        statusReason: 'restore_failed',
      });
      expect(givenUp(id)).toEqual(['Plain VM restore given up: its job never ended']);

      expect((await user.send(startPlainVm, { params: { id } })).status).toBe(200);
      await waitFor(async () => (await vmNow(id)).status === 'running', 15_000, 'running');
    } finally {
      t.compute.behave('snapshots', {});
      t.compute.release();
    }
  });
});
