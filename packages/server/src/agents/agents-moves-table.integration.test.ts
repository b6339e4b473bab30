import { type Agent, AgentState } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import type { AgentAction } from './agent-lifecycle.js';

// The spec's Moves table and decisions.md, as HTTP answers: action × state → status.
const EXPECTED: Record<AgentAction, Partial<Record<AgentState, 200>>> = {
  start: { stopped: 200 },
  stop: { running: 200 },
  restart: { running: 200 },
  destroy: { running: 200, stopped: 200, error: 200 },
};
const VIA: Record<AgentAction, AgentState> = {
  start: 'starting',
  stop: 'stopping',
  restart: 'restarting',
  destroy: 'destroying',
};
const STATES = AgentState.options;
const ACTIONS = Object.keys(EXPECTED) as AgentAction[];

describe.each(databaseKinds)('Agent Moves table over HTTP on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  const agents = new Map<string, Agent>();
  beforeAll(async () => {
    t = await createTestContext(kind);
    client = t.newClient();
    await signUpUser(client);
    // One running Agent per case, then put each in the state its case starts from.
    const created = await Promise.all(
      ACTIONS.flatMap((action) =>
        STATES.map(async (state) => {
          const res = await client.post('/api/agents', {
            name: `${action} ${state}`,
            size: 'small',
            region: 'eu',
            billingType: 'metered',
          });
          return [`${action}:${state}`, res.body as Agent] as const;
        }),
      ),
    );
    for (const [key, agent] of created) agents.set(key, agent);
    await waitFor(async () => {
      const list = (await client.get('/api/agents')).body as Agent[];
      return list.filter((a) => a.status === 'running').length === agents.size;
    }, 60_000);
    // Parking a row in a state directly: no job exists for it, so it stays there for the call.
    for (const [key, agent] of agents) {
      const state = key.split(':')[1] as AgentState;
      await t.ctx.database.db
        .updateTable('agents')
        .set({ state })
        .where('id', '=', agent.id)
        .execute();
    }
  }, 120_000);
  afterAll(() => t?.close());

  for (const action of ACTIONS) {
    for (const state of STATES) {
      const expected = EXPECTED[action][state] ?? 409;
      it(`${action} from ${state} → ${expected}`, async () => {
        const agent = agents.get(`${action}:${state}`) as Agent;
        const res =
          action === 'destroy'
            ? await client.delete(`/api/agents/${agent.id}`)
            : await client.post(`/api/agents/${agent.id}/${action}`);
        expect(res.status).toBe(expected);
        if (expected === 200) {
          expect(res.body.status).toBe(VIA[action]);
        } else {
          expect(res.body).toEqual({ error: 'invalid_state' });
          const row = await t.ctx.database.db
            .selectFrom('agents')
            .select('state')
            .where('id', '=', agent.id)
            .executeTakeFirst();
          expect(row?.state).toBe(state);
        }
      });
    }
  }
});
