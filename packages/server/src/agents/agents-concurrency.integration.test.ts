import {
  Agent,
  createAgent,
  deleteAgent,
  getAgent,
  getSelfAgent,
  type MachineState,
  restartAgent,
  startAgent,
  stopAgent,
} from '@svc/contract';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

type AgentAction = 'start' | 'stop' | 'restart' | 'destroy';
const ACTIONS: AgentAction[] = ['start', 'stop', 'restart', 'destroy'];
const ENDPOINTS = {
  start: startAgent,
  stop: stopAgent,
  restart: restartAgent,
  destroy: deleteAgent,
} as const;

/**
 * Every state change an Agent may show, written out from the Moves table of the HTTP reference
 * rather than derived from the code under test: user moves into their transient state, job
 * completions out of it, and failures of a transient state to `error`.
 */
const ALLOWED = new Set([
  'provisioning->running',
  'provisioning->error',
  'stopped->starting',
  'starting->running',
  'starting->error',
  'running->stopping',
  'stopping->stopped',
  'stopping->error',
  'running->restarting',
  'restarting->running',
  'restarting->error',
  'running->destroying',
  'stopped->destroying',
  'error->destroying',
  'destroying->error',
]);
const SETTLED: readonly (MachineState | 'removed')[] = ['running', 'stopped', 'error', 'removed'];
const DRIVER_CALLS = ['powerOn', 'powerOff', 'reboot', 'deleteServer'] as const;

describe.each(databaseKinds)('concurrent lifecycle calls on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  beforeAll(async () => {
    t = await createTestContext(kind, { overrides: { immediateJobRetries: true } });
    client = t.newClient();
    await signUpUser(client);
  });
  afterAll(() => t?.close());

  /** A lifecycle call that may win (200), lose the race (409) or find the Agent gone (404). */
  const call = (id: string, action: AgentAction) =>
    client.send(ENDPOINTS[action], { params: { id } });
  const stateOf = async (id: string): Promise<MachineState | 'removed'> => {
    const res = await client.send(getAgent, { params: { id } });
    return res.status === 404 ? 'removed' : Agent.parse(res.body).status;
  };
  const newRunningAgent = async () => {
    const res = await client.call(createAgent, {
      body: { name: 'prop', size: 'small', region: 'eu', billingType: 'metered' },
    });
    await waitFor(async () => (await stateOf(res.body.id)) === 'running', 15_000);
    return res.body;
  };
  /** The states an Agent went through, from its usage periods (one per state change). */
  const history = async (id: string) =>
    (
      await t.ctx.database.db
        .selectFrom('usagePeriods')
        .select('state')
        .where('resourceId', '=', id)
        .orderBy('seq')
        .execute()
    ).map((p) => p.state);

  it('never leaves the table, loses no job, and settles every Agent', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ agent: fc.nat(2), action: fc.constantFrom(...ACTIONS), pauseMs: fc.nat(40) }),
          {
            minLength: 4,
            maxLength: 10,
          },
        ),
        fc.record({
          latencyMs: fc.nat(60),
          failing: fc.option(fc.constantFrom(...DRIVER_CALLS), { nil: undefined }),
        }),
        async (steps, driver) => {
          for (const name of DRIVER_CALLS) {
            t.compute.behave(name, {
              latencyMs: driver.latencyMs,
              ...(driver.failing === name && { failTimes: Number.POSITIVE_INFINITY }),
            });
          }
          const agents = await Promise.all([0, 1, 2].map(() => newRunningAgent()));
          // Fire the steps concurrently, each after its own short pause.
          const results = await Promise.all(
            steps.map(async (step) => {
              await new Promise((resolve) => setTimeout(resolve, step.pauseMs));
              const res = await call(agents[step.agent]!.id, step.action);
              return { agent: step.agent, status: res.status };
            }),
          );
          // 404 only once a destroy has completed.
          for (const { agent, status } of results) {
            expect([200, 409, 404]).toContain(status);
            if (status === 404) expect(await stateOf(agents[agent]!.id)).toBe('removed');
          }

          // No job is lost: every Agent leaves its transient state.
          for (const agent of agents) {
            await waitFor(
              async () => {
                const state = await stateOf(agent.id);
                return SETTLED.includes(state);
              },
              20_000,
              `Agent ${agent.id} to settle`,
            );
          }
          for (const agent of agents) {
            const states = await history(agent.id);
            for (let i = 1; i < states.length; i++) {
              expect(
                ALLOWED.has(`${states[i - 1]}->${states[i]}`),
                `${states[i - 1]} -> ${states[i]}`,
              ).toBe(true);
            }
          }
          const pending = await sql<{ n: number }>`
            select count(*)::int as n from pgboss.job
            where name like 'agent.%' and name <> 'agent.provision-timeout' and state in ('created', 'retry', 'active')`.execute(
            t.ctx.database.db,
          );
          expect(pending.rows[0]?.n).toBe(0);
          for (const name of DRIVER_CALLS) t.compute.behave(name, {});
        },
      ),
      { numRuns: 4 },
    );
  }, 240_000);

  it.each(ACTIONS.filter((a) => a !== 'start'))(
    'lets exactly one of 6 concurrent %s calls win',
    async (action) => {
      const agent = await newRunningAgent();
      t.compute.behave(
        action === 'destroy' ? 'deleteServer' : action === 'stop' ? 'powerOff' : 'reboot',
        { latencyMs: 300 },
      );
      const statuses = await Promise.all(
        Array.from({ length: 6 }, () => call(agent.id, action).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(5);
      t.compute.behave('deleteServer', {});
      t.compute.behave('powerOff', {});
      t.compute.behave('reboot', {});
    },
  );

  it("keeps a destroyed Agent's token dead even when teardown fails", async () => {
    const agent = await newRunningAgent();
    const token = (await t.ctx.agents.agentToken(agent.id, false)).token;
    const auth = { headers: { authorization: `Bearer ${token}` } };
    expect((await t.newClient().call(getSelfAgent, {}, auth)).status).toBe(200);
    t.compute.behave('deleteServer', { failTimes: Number.POSITIVE_INFINITY });
    expect((await call(agent.id, 'destroy')).status).toBe(200);
    await waitFor(async () => (await stateOf(agent.id)) === 'error', 20_000, 'destroy failed');
    t.compute.behave('deleteServer', {});
    expect((await client.call(getAgent, { params: { id: agent.id } })).body.statusReason).toBe(
      'destroy_failed',
    );
    expect((await t.newClient().callError(getSelfAgent, {}, auth)).status).toBe(401);
  });
});
