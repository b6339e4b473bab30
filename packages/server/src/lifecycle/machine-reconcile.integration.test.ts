import { createAgent, DEFAULT_FIREWALL_RULES, type FirewallRule, getAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { firewallSync } from '../plain-vms/firewall-sync.js';
import { AGENT } from './machine-kinds.js';
import { reconcileMachines } from './machine-reconcile.js';

// The reconciler reads and repairs a page at a time; with pages of two, every loop turns over
// several pages and every set-based repair gets several machines.
const PAGE = 2;

describe.each(databaseKinds)('a reconcile pass over several pages on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  beforeAll(async () => {
    t = await createTestContext(kind);
    client = t.newClient();
    await signUpUser(client);
  });
  afterAll(() => t?.close());

  const runningAgent = async () => {
    const res = await client.call(createAgent, {
      body: {
        name: 'Paged',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    await waitFor(
      async () => (await client.call(getAgent, { params: { id } })).body.status === 'running',
      15_000,
      'running',
    );
    return id;
  };
  const deps = () => ({
    database: t.ctx.database,
    clock: t.ctx.clock,
    compute: t.compute,
    log: t.ctx.log.root,
    notices: t.ctx.notices,
    pageSize: PAGE,
  });

  it('removes every orphan, fails every stuck move with its usage rolled over, and keeps the rest', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await runningAgent());
    const stuck = ids.slice(0, 3);
    await t.ctx.database.db
      .updateTable('agents')
      .set({ state: 'stopping', updatedAt: new Date(Date.now() - 2 * 60 * 60_000) })
      .where('id', 'in', stuck)
      .execute();
    const orphans = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    for (const id of orphans) {
      const labels = { managedBy: 'svc', kind: 'agent', agentId: id };
      const spec = { id, size: 'small', region: 'eu', bootstrapEnv: {}, labels } as const;
      t.compute.servers.set(id, { status: 'running', labels, env: {}, spec, firewall: [] });
    }

    await reconcileMachines(deps(), { kind: AGENT, createSpec: () => expect.fail('no create') });

    for (const id of orphans) expect(t.compute.servers.has(id)).toBe(false);
    for (const id of ids) expect(t.compute.servers.has(id)).toBe(true);
    const rows = await t.ctx.database.db
      .selectFrom('agents')
      .select(['id', 'state', 'statusReason'])
      .where('id', 'in', ids)
      .execute();
    for (const row of rows) {
      expect(row).toMatchObject(
        stuck.includes(row.id)
          ? { state: 'error', statusReason: 'stop_timeout' }
          : { state: 'running', statusReason: null },
      );
    }
    const open = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .select(['resourceId', 'state'])
      .where('resourceId', 'in', stuck)
      .where('endedAt', 'is', null)
      .execute();
    expect(open.map((p) => p.state)).toEqual(['error', 'error', 'error']);
    expect(new Set(open.map((p) => p.resourceId))).toEqual(new Set(stuck));
    // One notice per machine given up, enqueued with its move (the job records each event).
    const { accountId } = await t.ctx.database.db
      .selectFrom('agents')
      .select('accountId')
      .where('id', '=', stuck[0] as string)
      .executeTakeFirstOrThrow();
    const notices = () =>
      t.ctx.database.db
        .selectFrom('noticeEvents')
        .select('kind')
        .where('accountId', '=', accountId)
        .execute();
    await waitFor(async () => (await notices()).length >= 3, 15_000, 'three notices');
    expect(await notices()).toEqual(Array(3).fill({ kind: 'machine_error' }));
  });

  it('re-applies the stored rules of every drifted VM and ends every lease it took', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await runningPlainVm(client, `paged-${i}`, 15_000));
    const drifted = ids.slice(1, 4);
    const other: FirewallRule[] = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '8080',
        sourceIps: ['0.0.0.0/0'],
        description: 'web',
      },
    ];
    for (const id of drifted) t.compute.servers.get(id)!.firewall = structuredClone(other);

    await firewallSync(deps()).reconcile(PAGE);

    for (const id of ids)
      expect(t.compute.servers.get(id)?.firewall).toEqual(DEFAULT_FIREWALL_RULES);
    const rows = await t.ctx.database.db
      .selectFrom('plainVms')
      .select(['firewallRules', 'firewallLeaseUntil'])
      .where('id', 'in', ids)
      .execute();
    for (const row of rows) {
      expect(row).toEqual({ firewallRules: DEFAULT_FIREWALL_RULES, firewallLeaseUntil: null });
    }
    const sets = t.compute.calls.filter((c) => c.call === 'setFirewall' && ids.includes(c.id));
    expect(sets.map((c) => c.id).sort()).toEqual([...drifted].sort());
  });
});
