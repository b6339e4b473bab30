import { getPlainVm } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { reconcilePlainVms } from './plain-vms.jobs.js';

// The stand-in driver reports every Plain VM's SSH server at 192.0.2.10:22; rows are set to
// another endpoint by hand, as if the driver had moved it since provisioning recorded it.
const REPORTED = { host: '192.0.2.10', port: 22 };
const STALE = { sshHost: '198.51.100.7', sshPort: 22001 };

describe.each(databaseKinds)('the Plain VM reconciler’s ssh field on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  let n = 0;
  beforeAll(async () => {
    t = await createTestContext(kind);
    client = t.newClient();
    await signUpUser(client);
  });
  afterAll(() => t?.close());

  const runningVm = () => {
    n += 1;
    return runningPlainVm(client, `endpoint-${n}`, 15_000);
  };
  const set = (id: string, values: Record<string, unknown>) =>
    t.ctx.database.db.updateTable('plainVms').set(values).where('id', '=', id).execute();
  const sshField = async (id: string) =>
    (await client.call(getPlainVm, { params: { id } })).body.ssh;
  const reconcile = () =>
    reconcilePlainVms({
      database: t.ctx.database,
      clock: t.ctx.clock,
      compute: t.compute,
      log: t.ctx.log.root,
    });

  it('follows the driver for settled VMs only, and even when another step of the pass fails', async () => {
    const [running, stopped, moving] = [await runningVm(), await runningVm(), await runningVm()];
    // Only this test's passes from here: the context's own (every 5 minutes) would race them.
    await t.ctx.jobs.stop();
    await set(running, STALE);
    await set(stopped, { ...STALE, state: 'stopped' });
    // A move under way owns the machine: its row is left to the move.
    await set(moving, { ...STALE, state: 'starting' });
    const driverDown = new Error('the driver’s own repairs failed');
    Object.assign(t.compute, { reconcile: () => Promise.reject(driverDown) });
    try {
      await expect(reconcile()).rejects.toBe(driverDown);
    } finally {
      Object.assign(t.compute, { reconcile: undefined });
    }
    expect(await sshField(running)).toEqual(REPORTED);
    expect(await sshField(stopped)).toEqual(REPORTED);
    expect(await sshField(moving)).toEqual({ host: STALE.sshHost, port: STALE.sshPort });
    // Settled again: the next pass brings it in line.
    await set(moving, { state: 'running' });
    await reconcile();
    expect(await sshField(moving)).toEqual(REPORTED);
  });
});
