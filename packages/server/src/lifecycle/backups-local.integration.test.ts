import type { Agent, Snapshot } from '@svc/contract';
import { agentSnapshots, createAgent, getAgent, updateAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackupDays } from '../../test/backup-days.js';
import type { TestClient } from '../../test/test-client.js';
import { createLocalTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import type { LocalComputeDriver } from '../adapters/compute/local-compute-driver.js';

// Daily backups on the local driver, the job run as the clock moves a day at a time: the newest
// `keep` backups stay, manual snapshots are never pruned, and a machine without backups gets none.

describe('Daily backups on the local driver', () => {
  let t: TestContext & { readonly driver: LocalComputeDriver };
  let user: TestClient;
  beforeAll(async () => {
    t = await createLocalTestContext({ env: { PROVISION_TIMEOUT_MS: '60000' } });
    user = t.newClient();
    await signUpUser(user);
  }, 60_000);
  afterAll(() => t?.close());

  const running = async (name: string) => {
    const body = { name, size: 'small', region: 'us', billingType: 'metered' } as const;
    const { id } = (await user.call(createAgent, { body })).body;
    await waitFor(
      async () =>
        ((await user.call(getAgent, { params: { id } })).body as Agent).status === 'running',
      60_000,
      'running',
    );
    return id;
  };
  const snapshotsOf = async (id: string) =>
    (await user.call(agentSnapshots.list, { params: { id } })).body.snapshots as Snapshot[];

  it('keeps the newest `keep` backups over five days, and leaves manual snapshots', async () => {
    const id = await running('kept');
    const other = await running('without');
    const manual = (await user.call(agentSnapshots.create, { params: { id }, body: {} })).body;
    await waitFor(
      async () => (await snapshotsOf(id)).some((s) => s.id === manual.id && s.status === 'ready'),
      30_000,
      'manual ready',
    );
    const before = (await user.call(getAgent, { params: { id } })).body as Agent;
    expect(before.backups).toMatchObject({ enabled: false, keep: 7 });
    const patched = await user.call(updateAgent, {
      params: { id },
      body: { backups: { enabled: true, keep: 3 } },
    });
    expect(patched.body.backups).toEqual({
      enabled: true,
      keep: 3,
      hourUtc: before.backups.hourUtc,
    });
    // The idle stop is left as it was when only backups are given.
    expect(patched.body.idleStopMinutes).toBe(before.idleStopMinutes);

    const { names, snapshots } = await runBackupDays(t, user, { kind: 'agent', id }, 5);
    const backups = snapshots.filter((s) => s.kind === 'backup');
    expect(backups.map((s) => s.name)).toEqual(names.slice(-3).reverse());
    expect(backups.every((s) => s.status === 'ready')).toBe(true);
    expect(snapshots.filter((s) => s.kind === 'manual').map((s) => s.id)).toEqual([manual.id]);
    // Backups are not counted against SNAPSHOTS_PER_MACHINE, and the Agent without them has none.
    expect(await snapshotsOf(other)).toEqual([]);

    // A lower keep prunes at the next run.
    await user.call(updateAgent, { params: { id }, body: { backups: { enabled: true, keep: 1 } } });
    const fewer = await runBackupDays(t, user, { kind: 'agent', id }, 1);
    expect(fewer.snapshots.filter((s) => s.kind === 'backup').map((s) => s.name)).toEqual(
      fewer.names,
    );
  }, 300_000);

  it('refuses an empty or unknown PATCH, and a keep out of 1..14', async () => {
    const id = (
      await user.call(createAgent, {
        body: { name: 'patch', size: 'small', region: 'us', billingType: 'metered' },
      })
    ).body.id;
    for (const body of [{}, { backups: { enabled: true, keep: 15 } }, { other: 1 }]) {
      const answer = await user.send(updateAgent, { params: { id }, body: body as never });
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
  });
});
