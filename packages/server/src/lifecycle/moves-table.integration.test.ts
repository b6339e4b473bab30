import {
  createAgent,
  createPlainVm,
  getAgent,
  getPlainVm,
  listAgents,
  listPlainVms,
  type MachineMoveAction,
  MachineState,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hetznerDriverOnStandIn } from '../../test/hetzner/driver.js';
import { expectConformant } from '../../test/hetzner/test-helpers.js';
import type { TestClient } from '../../test/test-client.js';
import { STAND_IN_PROBES } from '../../test/test-compute-driver.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

// The Moves table of docs/reference.md#lifecycle, as HTTP answers: action × state → status. Plain VM
// states mirror Agent states, so one table serves both.
const EXPECTED: Record<MachineMoveAction, Partial<Record<MachineState, 200>>> = {
  start: { stopped: 200 },
  stop: { running: 200 },
  restart: { running: 200 },
  destroy: { running: 200, stopped: 200, error: 200 },
};
const VIA: Record<MachineMoveAction, MachineState> = {
  start: 'starting',
  stop: 'stopping',
  restart: 'restarting',
  destroy: 'destroying',
};
const STATES = MachineState.options;
const ACTIONS = Object.keys(EXPECTED) as MachineMoveAction[];

// The moves are sent by path, the table being over both kinds' paths; the machines they move are
// made and read through the endpoints' descriptors.
const RESOURCES = [
  {
    path: '/api/agents',
    table: 'agents',
    noun: 'Agent',
    create: (client: TestClient, name: string) =>
      client.call(createAgent, {
        body: { name, size: 'small', region: 'eu', billingType: 'metered' },
      }),
    list: listAgents,
    detail: getAgent,
  },
  {
    path: '/api/plain-vms',
    table: 'plainVms',
    noun: 'Plain VM',
    create: (client: TestClient, name: string) =>
      client.call(createPlainVm, {
        body: {
          name: name.replace(/ /g, '-'),
          tier: 'small',
          region: 'eu',
          osImageKey: 'ubuntu-24.04',
          billingType: 'metered',
          access: { passwordEnabled: true, vaultEntryIds: [] },
        },
      }),
    list: listPlainVms,
    detail: getPlainVm,
  },
] as const;

// Every database with the test driver; and the hetzner driver against the stand-in of Hetzner
// Cloud (its requests checked against Hetzner's description), where the moves must also reach
// the provider.
const cases = [
  ...databaseKinds.flatMap((kind) => RESOURCES.map((r) => [kind, 'test', r.path, r] as const)),
  ...RESOURCES.map((r) => ['pglite', 'hetzner', r.path, r] as const),
];

describe.each(cases)('Moves table over HTTP on %s, %s driver: %s', (kind, driver, _, resource) => {
  let t: TestContext;
  let client: TestClient;
  let hetzner: Awaited<ReturnType<typeof hetznerDriverOnStandIn>> | undefined;
  const ids = new Map<string, string>();
  beforeAll(async () => {
    hetzner = driver === 'hetzner' ? await hetznerDriverOnStandIn() : undefined;
    t = await createTestContext(kind, {
      ...(hetzner && { overrides: { compute: hetzner.driver, machineProbes: STAND_IN_PROBES } }),
    });
    client = t.newClient();
    await signUpUser(client);
    // One running machine per case, then put each in the state its case starts from.
    const created = await Promise.all(
      ACTIONS.flatMap((action) =>
        STATES.map(async (state) => {
          const res = await resource.create(client, `${action} ${state}`);
          return [`${action}:${state}`, res.body.id] as const;
        }),
      ),
    );
    for (const [key, id] of created) ids.set(key, id);
    await waitFor(async () => {
      const list = (await client.call(resource.list)).body;
      return list.filter((m) => m.status === 'running').length === ids.size;
    }, 60_000);
    // Parking a row in a state directly: no job exists for it, so it stays there for the call.
    for (const [key, id] of ids) {
      const state = key.split(':')[1] as MachineState;
      await t.ctx.database.db
        .updateTable(resource.table)
        .set({ state })
        .where('id', '=', id)
        .execute();
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (hetzner) expectConformant(hetzner.conformance);
    await hetzner?.standIn.close();
  });

  for (const action of ACTIONS) {
    for (const state of STATES) {
      const expected = EXPECTED[action][state] ?? 409;
      it(`${action} from ${state} → ${expected}`, async () => {
        const id = ids.get(`${action}:${state}`) as string;
        const res =
          action === 'destroy'
            ? await client.delete(`${resource.path}/${id}`)
            : await client.post(`${resource.path}/${id}/${action}`);
        expect(res.status).toBe(expected);
        if (expected === 200) {
          expect(res.body).toMatchObject({ status: VIA[action] });
        } else {
          // The refusal says which action met which state.
          expect(res.body).toEqual({
            error: 'invalid_state',
            detail: `cannot ${action} the ${resource.noun} while it is ${state}`,
          });
          const row = await t.ctx.database.db
            .selectFrom(resource.table)
            .select('state')
            .where('id', '=', id)
            .executeTakeFirst();
          expect(row?.state).toBe(state);
        }
      });
    }
  }

  if (driver !== 'hetzner') return;
  it('the moves reach Hetzner: destroyed machines leave no server or firewall', async () => {
    const stand = hetzner?.standIn;
    const destroyed = STATES.filter((state) => EXPECTED.destroy[state]).map(
      (state) => ids.get(`destroy:${state}`) as string,
    );
    const left = (resources: Iterable<{ labels: Record<string, string> }>) =>
      [...resources].filter((r) => destroyed.includes(r.labels['svc/machine'] as string));
    await waitFor(
      async () =>
        (
          await Promise.all(destroyed.map((id) => client.send(resource.detail, { params: { id } })))
        ).every((res) => res.status === 404),
      60_000,
      'destroyed',
    );
    expect(left(stand?.state.servers.values() ?? [])).toEqual([]);
    expect(left(stand?.state.firewalls.values() ?? [])).toEqual([]);
    const stopped = ids.get('stop:running') as string;
    await waitFor(
      async () =>
        (await client.call(resource.detail, { params: { id: stopped } })).body.status === 'stopped',
      60_000,
      'stopped',
    );
    const server = [...(stand?.state.servers.values() ?? [])].find(
      (s) => s.labels['svc/machine'] === stopped,
    );
    expect(server?.status).toBe('off');
  }, 120_000);
});
