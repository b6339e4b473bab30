import { createAgent, deleteAgent, getAgent, stopAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createLocalTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

// What the log says about an Agent's life, read from the pino output of the real service on the
// local driver (the test context writes it to a capture): one info line per move, naming the
// machine, its driver and how long the move took; the dashboard's polling is not at info.

describe('the log of a machine', { timeout: 90_000 }, () => {
  let t: TestContext;
  let owner: TestClient;

  beforeAll(async () => {
    t = await createLocalTestContext();
    owner = t.newClient();
    await signUpUser(owner);
  });

  afterAll(() => t?.close());

  /** Polls the detail as the dashboard does (a GET a second, here faster) until `done`. */
  const poll = (id: string, done: (answer: { status: number; body: unknown }) => boolean) =>
    waitFor(async () => done(await owner.send(getAgent, { params: { id } })), 60_000, `${id}`);
  const isIn = (status: string) => (answer: { body: unknown }) =>
    (answer.body as { status?: string }).status === status;

  it('logs create, stop and destroy once each at info, with the id, driver and duration', async () => {
    t.logs.lines.length = 0;
    const body = { name: 'logged', size: 'small', region: 'eu', billingType: 'metered' } as const;
    const { id } = (await owner.call(createAgent, { body })).body;
    await poll(id, isIn('running'));
    await owner.call(stopAgent, { params: { id } });
    await poll(id, isIn('stopped'));
    await owner.call(deleteAgent, { params: { id } });
    await poll(id, (answer) => answer.status === 404);

    const entries = t.logs.entries();
    const info = entries.filter((entry) => entry.level === 30);
    const moves = info.filter((entry) => entry.agentId === id && 'move' in entry);
    expect(moves.map(({ move, from, to }) => ({ move, from, to }))).toEqual([
      { move: 'create', from: 'provisioning', to: 'running' },
      { move: 'stop', from: 'stopping', to: 'stopped' },
      { move: 'destroy', from: 'destroying', to: 'destroyed' },
    ]);
    for (const line of moves) {
      expect(line).toMatchObject({ driver: 'local', accountId: expect.any(String) });
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
      expect(line.msg).toMatch(/^Agent (create|stop|destroy): /);
    }
    // The provisioning took the local driver's start of the machine: longer than nothing.
    expect(moves[0]?.durationMs).toBeGreaterThan(0);

    // Every poll answered, and none of them is at info; the changes (POST, DELETE) are.
    const requests = entries.filter((entry) => entry.msg === 'request');
    const polls = requests.filter((entry) => entry.method === 'GET');
    expect(polls.length).toBeGreaterThan(3);
    expect(polls.filter((entry) => entry.level === 30 && entry.status === 200)).toEqual([]);
    expect(info.filter((entry) => entry.msg === 'request').map((entry) => entry.method)).toEqual(
      expect.arrayContaining(['POST', 'DELETE']),
    );
  });
});
