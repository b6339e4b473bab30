import { type MachineMoveAction, MachineState } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
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

const RESOURCES = [
  {
    path: '/api/agents',
    table: 'agents',
    noun: 'Agent',
    create: (name: string) => ({ name, size: 'small', region: 'eu', billingType: 'metered' }),
  },
  {
    path: '/api/plain-vms',
    table: 'plainVms',
    noun: 'Plain VM',
    create: (name: string) => ({
      name: name.replace(/ /g, '-'),
      tier: 'small',
      region: 'eu',
      osImageKey: 'ubuntu-24.04',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
    }),
  },
] as const;

const cases = databaseKinds.flatMap((kind) => RESOURCES.map((r) => [kind, r.path, r] as const));

describe.each(cases)('Moves table over HTTP on %s: %s', (kind, _, resource) => {
  let t: TestContext;
  let client: TestClient;
  const ids = new Map<string, string>();
  beforeAll(async () => {
    t = await createTestContext(kind);
    client = t.newClient();
    await signUpUser(client);
    // One running machine per case, then put each in the state its case starts from.
    const created = await Promise.all(
      ACTIONS.flatMap((action) =>
        STATES.map(async (state) => {
          const res = await client.post(resource.path, resource.create(`${action} ${state}`));
          return [`${action}:${state}`, res.body.id as string] as const;
        }),
      ),
    );
    for (const [key, id] of created) ids.set(key, id);
    await waitFor(async () => {
      const list = (await client.get(resource.path)).body as { status: string }[];
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
  afterAll(() => t?.close());

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
          expect(res.body.status).toBe(VIA[action]);
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
});
