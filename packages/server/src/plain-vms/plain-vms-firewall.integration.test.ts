import { isDeepStrictEqual } from 'node:util';
import {
  DEFAULT_FIREWALL_RULES,
  type FirewallRule,
  getPlainVmFirewall,
  putPlainVmFirewall,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';
import { firewallSync } from './firewall-sync.js';

const MOSH: FirewallRule = {
  direction: 'in',
  protocol: 'udp',
  port: '60000-61000',
  sourceIps: ['0.0.0.0/0'],
  description: 'mosh',
};
const NEW_RULES = [DEFAULT_FIREWALL_RULES[0], MOSH] as FirewallRule[];

describe.each(databaseKinds)('the firewall in the database and at the provider on %s', (kind) => {
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
    return runningPlainVm(client, `fw-${n}`, 15_000);
  };
  const put = (id: string, rules: FirewallRule[]) =>
    client.send(putPlainVmFirewall, { params: { id }, body: { rules } });
  const shown = async (id: string) =>
    (await client.call(getPlainVmFirewall, { params: { id } })).body.rules as FirewallRule[];
  const enforced = (id: string) => t.compute.servers.get(id)?.firewall;
  /** The firewall's keeper as another process would build it: same database, same provider. */
  const sync = () =>
    firewallSync({
      database: t.ctx.database,
      clock: t.ctx.clock,
      compute: t.compute,
      log: t.ctx.log.root,
      leaseWaitMs: 0,
    });
  /** The reconciler's firewall pass, as the `plain-vms.reconcile` job runs it. */
  const reconcile = () => sync().reconcile();

  it('keeps both on the old rules when the driver applied the change but its answer was lost', async () => {
    const id = await runningVm();
    t.compute.behave('setFirewall', { failTimes: 1, appliedFailures: 1 });
    expect(await put(id, NEW_RULES)).toMatchObject({
      status: 500,
      body: { error: 'internal_error' },
    });
    t.compute.behave('setFirewall', {});
    expect(await shown(id)).toEqual(DEFAULT_FIREWALL_RULES);
    expect(enforced(id)).toEqual(DEFAULT_FIREWALL_RULES);
    // The lease went with the failure: the next change goes through and both have it.
    expect(await put(id, NEW_RULES)).toMatchObject({ status: 200, body: { rules: NEW_RULES } });
    expect(await shown(id)).toEqual(NEW_RULES);
    expect(enforced(id)).toEqual(NEW_RULES);
  });

  it('re-applies the database’s rules in the reconciler when putting the old rules back failed too', async () => {
    const id = await runningVm();
    // The change lands and its answer is lost; then the put-back fails before it lands.
    t.compute.behave('setFirewall', { failTimes: 2, appliedFailures: 1 });
    expect((await put(id, NEW_RULES)).status).toBe(500);
    t.compute.behave('setFirewall', {});
    expect(enforced(id)).toEqual(NEW_RULES);
    expect(await shown(id)).toEqual(DEFAULT_FIREWALL_RULES);

    await t.ctx.jobs.enqueue(t.ctx.database.db, PLAIN_VM.jobs.reconcile, {});
    await waitFor(
      () => isDeepStrictEqual(enforced(id), DEFAULT_FIREWALL_RULES),
      15_000,
      'the stored rules re-applied',
    );
    expect(await shown(id)).toEqual(DEFAULT_FIREWALL_RULES);
  });

  it('undoes a change made at the provider by hand, and GET shows the stored rules throughout', async () => {
    const id = await runningVm();
    expect((await put(id, NEW_RULES)).status).toBe(200);
    t.compute.servers.get(id)!.firewall = [MOSH];
    expect(await shown(id)).toEqual(NEW_RULES);
    await reconcile();
    expect(enforced(id)).toEqual(NEW_RULES);
    expect(await shown(id)).toEqual(NEW_RULES);
  });

  it('leaves a VM whose change is under way to that change, and refuses a second changer (409)', async () => {
    const id = await runningVm();
    t.compute.behave('setFirewall', { hang: true });
    const first = put(id, NEW_RULES);
    await waitFor(() => t.compute.calls.some((c) => c.call === 'setFirewall' && c.id === id));
    // Another process's change.
    await expect(sync().replace(id, [MOSH])).rejects.toMatchObject({ code: 'invalid_state' });
    const reads = () => t.compute.calls.filter((c) => c.call === 'getFirewall' && c.id === id);
    const readsBefore = reads().length;
    await reconcile();
    expect(reads()).toHaveLength(readsBefore);
    t.compute.behave('setFirewall', {});
    t.compute.release();
    expect(await first).toMatchObject({ status: 200, body: { rules: NEW_RULES } });
    expect(enforced(id)).toEqual(NEW_RULES);
    expect(await shown(id)).toEqual(NEW_RULES);
  });
});
