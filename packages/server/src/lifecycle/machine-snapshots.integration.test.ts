import type { Agent, PlainVm, Snapshot } from '@svc/contract';
import {
  activateSubscription,
  agentSnapshots,
  cloneAgent,
  createAgent,
  createOrg,
  createPlainVm,
  deleteAgent,
  getAgent,
  getPlainVm,
  plainVmSnapshots,
  resizeAgent,
  restartAgent,
  startAgent,
  startPlainVm,
  stopAgent,
  stopPlainVm,
  transferAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainVmBody } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

// Snapshots through the API on the in-memory test driver: states, the limit, the guard a disk
// operation puts on moves, transfer and destroy, a Plain VM, and who may call them. The disk's
// content going back is tested on the local driver (machine-snapshots-local.integration.test.ts).

const LIMIT = 3;

describe.each(databaseKinds)('Snapshots on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  let billedOrg: string;
  beforeAll(async () => {
    t = await createTestContext(kind, {
      env: { SNAPSHOTS_PER_MACHINE: String(LIMIT) },
      // A failing snapshot's retries come at once.
      overrides: { immediateJobRetries: true },
    });
    user = t.newClient();
    await signUpUser(user);
    billedOrg = (await user.call(createOrg, { body: { name: 'sn', slug: `snap-${kind}` } })).body
      .id;
    await user.call(activateSubscription, { params: { id: billedOrg } });
  });
  afterAll(() => t?.close());

  const agentNow = async (id: string) =>
    (await user.call(getAgent, { params: { id } })).body as Agent;
  const vmNow = async (id: string) =>
    (await user.call(getPlainVm, { params: { id } })).body as PlainVm;
  const listOf = async (id: string, client = user) =>
    (await client.call(agentSnapshots.list, { params: { id } })).body.snapshots as Snapshot[];

  async function runningAgent(): Promise<string> {
    const body = { name: 'snappy', size: 'small', region: 'us', billingType: 'metered' } as const;
    const { id } = (await user.call(createAgent, { body })).body;
    await waitFor(async () => (await agentNow(id)).status === 'running', 15_000, 'running');
    return id;
  }

  /** Takes a snapshot of Agent `id` and waits until it is ready. */
  async function readySnapshot(id: string, name?: string): Promise<Snapshot> {
    const made = (
      await user.call(agentSnapshots.create, { params: { id }, body: name ? { name } : {} })
    ).body;
    expect(made.status).toBe('creating');
    return waitFor(
      async () => (await listOf(id)).find((s) => s.id === made.id && s.status === 'ready'),
      15_000,
      'snapshot ready',
    );
  }

  it('takes a running Agent’s snapshot in the background, lists it newest first, audits it', async () => {
    const id = await runningAgent();
    const first = await readySnapshot(id);
    expect(first.name).toMatch(/^snapshot-\d{8}-\d{6}$/);
    expect(first).toMatchObject({ kind: 'manual', sizeBytes: 4096, failureReason: null });
    expect(first.readyAt).not.toBeNull();
    t.clock.advance(1_000);
    const second = await readySnapshot(id, 'before-upgrade');
    expect((await listOf(id)).map((s) => s.name)).toEqual(['before-upgrade', first.name]);
    expect((await agentNow(id)).diskOperation).toBeNull();
    // A live name is taken once.
    const again = await user.callError(agentSnapshots.create, {
      params: { id },
      body: { name: second.name },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('before-upgrade');
    const audited = await t.ctx.database.db
      .selectFrom('auditEvents')
      .select('action')
      .where('resourceId', '=', id)
      .where('action', '=', 'agent.snapshot')
      .execute();
    expect(audited).toHaveLength(2);
  });

  it(`refuses the ${LIMIT + 1}th with snapshot_limit, and takes one again after a delete`, async () => {
    const id = await runningAgent();
    const made: Snapshot[] = [];
    for (let i = 0; i < LIMIT; i += 1) made.push(await readySnapshot(id, `s${i}`));
    const refused = await user.callError(agentSnapshots.create, { params: { id }, body: {} });
    expect(refused).toMatchObject({ status: 409, body: { error: 'snapshot_limit' } });
    const gone = made[0] as Snapshot;
    const res = await user.send(agentSnapshots.remove, { params: { id, snapshotId: gone.id } });
    expect(res.status).toBe(204);
    expect((await listOf(id)).map((s) => s.id)).not.toContain(gone.id);
    expect(t.compute.snapshotsHeld.has(`test-${gone.id}`)).toBe(false);
    await readySnapshot(id, 'after-delete');
  });

  it('refuses moves while a snapshot is taken, and a restore of a running machine', async () => {
    const id = await runningAgent();
    t.compute.behave('snapshots', { hang: true });
    try {
      const made = (await user.call(agentSnapshots.create, { params: { id }, body: {} })).body;
      expect((await agentNow(id)).diskOperation).toBe('snapshot');
      for (const [endpoint, body] of [
        [stopAgent, undefined],
        [restartAgent, undefined],
        [deleteAgent, undefined],
        [transferAgent, { targetAccountId: billedOrg }],
        [cloneAgent, { name: 'copy', size: 'small', billingType: 'metered' }],
      ] as const) {
        const res = await user.send(endpoint, { params: { id }, ...(body && { body }) } as never);
        expect(res, endpoint.id).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
        expect((res.body as { detail: string }).detail).toContain('snapshot');
      }
      const another = await user.callError(agentSnapshots.create, { params: { id }, body: {} });
      expect(another.status).toBe(409);
      const deleting = await user.send(agentSnapshots.remove, {
        params: { id, snapshotId: made.id },
      });
      expect(deleting.status).toBe(409);
    } finally {
      t.compute.behave('snapshots', {});
      t.compute.release();
    }
    await waitFor(async () => (await agentNow(id)).diskOperation === null, 15_000, 'done');
    const [ready] = await listOf(id);
    expect(ready?.status).toBe('ready');
    const running = await user.callError(agentSnapshots.restore, {
      params: { id, snapshotId: ready?.id as string },
    });
    expect(running.status).toBe(409);
    expect(running.body.detail).toContain('stop it first');
  });

  it('restores onto a stopped Agent, which stays stopped and refuses a start meanwhile', async () => {
    const id = await runningAgent();
    const snapshot = await readySnapshot(id);
    await user.call(stopAgent, { params: { id } });
    await waitFor(async () => (await agentNow(id)).status === 'stopped', 15_000, 'stopped');
    t.compute.behave('snapshots', { hang: true });
    try {
      const restored = (
        await user.call(agentSnapshots.restore, { params: { id, snapshotId: snapshot.id } })
      ).body;
      expect(restored.id).toBe(snapshot.id);
      expect((await agentNow(id)).diskOperation).toBe('restore');
      const start = await user.callError(startAgent, { params: { id } });
      expect(start).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
      expect(start.body.detail).toContain('restored');
      const resize = await user.callError(resizeAgent, {
        params: { id },
        body: { size: 'medium' },
      });
      expect(resize).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
      expect(resize.body.detail).toContain('restored');
    } finally {
      t.compute.behave('snapshots', {});
      t.compute.release();
    }
    await waitFor(async () => (await agentNow(id)).diskOperation === null, 15_000, 'restored');
    expect((await agentNow(id)).status).toBe('stopped');
    expect(t.compute.calls.filter((c) => c.call === 'snapshots' && c.id === id)).toHaveLength(2);
    // The disk came back with the token of its time: the current one is pushed again.
    await waitFor(
      async () => t.compute.calls.some((c) => c.call === 'setBootstrapEnv' && c.id === id),
      15_000,
      'the token pushed after the restore',
    );
  });

  it('marks a snapshot failed with a safe reason once the driver keeps failing', async () => {
    const id = await runningAgent();
    t.compute.behave('snapshots', {
      failTimes: Number.POSITIVE_INFINITY,
      failWith: () => new Error('secret-host.internal refused token=abc'),
    });
    try {
      const made = (await user.call(agentSnapshots.create, { params: { id }, body: {} })).body;
      const failed = await waitFor(
        async () => (await listOf(id)).find((s) => s.id === made.id && s.status === 'failed'),
        30_000,
        'failed',
      );
      expect(failed.failureReason).toBeTruthy();
      expect(failed.failureReason).not.toContain('secret');
      expect((await agentNow(id)).diskOperation).toBeNull();
    } finally {
      t.compute.behave('snapshots', {});
    }
  }, 60_000);

  it('says a restore that failed on every try on the machine, until a restore succeeds', async () => {
    const id = await runningAgent();
    const snapshot = await readySnapshot(id);
    await user.call(stopAgent, { params: { id } });
    await waitFor(async () => (await agentNow(id)).status === 'stopped', 15_000, 'stopped');
    t.compute.behave('snapshots', {
      failTimes: Number.POSITIVE_INFINITY,
      failWith: () => new Error('secret-host.internal refused'),
    });
    try {
      await user.call(agentSnapshots.restore, { params: { id, snapshotId: snapshot.id } });
      await waitFor(async () => (await agentNow(id)).diskOperation === null, 30_000, 'ended');
      expect(await agentNow(id)).toMatchObject({
        status: 'stopped',
        statusReason: 'restore_failed',
      });
    } finally {
      t.compute.behave('snapshots', {});
    }
    // The next restore that succeeds clears it, and so would a start.
    await user.call(agentSnapshots.restore, { params: { id, snapshotId: snapshot.id } });
    await waitFor(async () => (await agentNow(id)).diskOperation === null, 15_000, 'restored');
    expect(await agentNow(id)).toMatchObject({ status: 'stopped', statusReason: null });
  }, 60_000);

  it('moves the snapshots with a transfer, and removes them with the machine', async () => {
    const id = await runningAgent();
    const snapshot = await readySnapshot(id);
    t.clock.advance(60_000);
    await user.call(transferAgent, { params: { id }, body: { targetAccountId: billedOrg } });
    const row = await t.ctx.database.db
      .selectFrom('machineSnapshots')
      .selectAll()
      .where('id', '=', snapshot.id)
      .executeTakeFirstOrThrow();
    expect(row.accountId).toBe(billedOrg);
    expect((await listOf(id)).map((s) => s.id)).toEqual([snapshot.id]);

    await user.call(deleteAgent, { params: { id } });
    await waitFor(
      async () => (await user.send(getAgent, { params: { id } })).status === 404,
      15_000,
      'destroyed',
    );
    const after = await t.ctx.database.db
      .selectFrom('machineSnapshots')
      .select('deletedAt')
      .where('id', '=', snapshot.id)
      .executeTakeFirstOrThrow();
    expect(after.deletedAt).not.toBeNull();
    expect(t.compute.snapshotsHeld.has(`test-${snapshot.id}`)).toBe(false);
    // Its storage was billed to the first account until the transfer, to the second from then
    // until the destroy, and to nobody after.
    const periods = await t.ctx.database.db
      .selectFrom('snapshotUsage')
      .selectAll()
      .where('snapshotId', '=', snapshot.id)
      .orderBy('startedAt')
      .execute();
    expect(periods).toHaveLength(2);
    const [before, since] = periods;
    expect(before?.accountId).not.toBe(billedOrg);
    expect(before?.startedAt.getTime()).toBe(Date.parse(snapshot.readyAt as string));
    expect(before?.endedAt?.getTime()).toBeGreaterThanOrEqual(
      Date.parse(snapshot.readyAt as string) + 60_000,
    );
    expect(since).toMatchObject({
      accountId: billedOrg,
      startedAt: before?.endedAt,
      endedAt: after.deletedAt,
    });
  });

  it('snapshots and restores a Plain VM the same way', async () => {
    const { id } = (await user.call(createPlainVm, { body: plainVmBody('snapvm') })).body;
    await waitFor(async () => (await vmNow(id)).status === 'running', 15_000, 'running');
    const made = (
      await user.call(plainVmSnapshots.create, { params: { id }, body: { name: 'vm-1' } })
    ).body;
    const list = async () =>
      (await user.call(plainVmSnapshots.list, { params: { id } })).body.snapshots;
    await waitFor(async () => (await list())[0]?.status === 'ready', 15_000, 'ready');
    const running = await user.callError(plainVmSnapshots.restore, {
      params: { id, snapshotId: made.id },
    });
    expect(running.status).toBe(409);
    await user.call(stopPlainVm, { params: { id } });
    await waitFor(async () => (await vmNow(id)).status === 'stopped', 15_000, 'stopped');
    await user.call(plainVmSnapshots.restore, { params: { id, snapshotId: made.id } });
    await waitFor(async () => (await vmNow(id)).diskOperation === null, 15_000, 'restored');
    await user.call(startPlainVm, { params: { id } });
    const removed = await user.send(plainVmSnapshots.remove, {
      params: { id, snapshotId: made.id },
    });
    expect(removed.status).toBe(204);
    expect(await list()).toEqual([]);
  });

  it('answers 404 to someone outside the machine’s account', async () => {
    const id = await runningAgent();
    const snapshot = await readySnapshot(id);
    const stranger = t.newClient();
    await signUpUser(stranger);
    const params = { id, snapshotId: snapshot.id };
    for (const res of [
      await stranger.send(agentSnapshots.list, { params: { id } }),
      await stranger.send(agentSnapshots.create, { params: { id }, body: {} }),
      await stranger.send(agentSnapshots.restore, { params }),
      await stranger.send(agentSnapshots.remove, { params }),
    ]) {
      expect(res).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    expect((await listOf(id)).map((s) => s.id)).toEqual([snapshot.id]);
  });
});
