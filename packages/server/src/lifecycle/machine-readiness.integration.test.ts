import {
  createAgent,
  createPlainVm,
  getAgent,
  getPlainVm,
  restartAgent,
  restartPlainVm,
  startAgent,
  startPlainVm,
  stopAgent,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainVmBody } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';

/** What differs between the two machine kinds in these requests: their endpoints. */
const KINDS = {
  agent: {
    create: (client: TestClient, name: string) =>
      client.call(createAgent, {
        body: { name, size: 'small', region: 'eu', billingType: 'metered' },
      }),
    detail: getAgent,
    moves: { start: startAgent, stop: stopAgent, restart: restartAgent },
  },
  plainVm: {
    create: (client: TestClient, name: string) =>
      client.call(createPlainVm, { body: plainVmBody(name) }),
    detail: getPlainVm,
    moves: { start: startPlainVm, stop: stopPlainVm, restart: restartPlainVm },
  },
} as const;
type Kind = keyof typeof KINDS;
type Move = keyof (typeof KINDS)[Kind]['moves'];

// Every move into `running` (create, clone, start, restart) waits until the machine answers as
// its users reach it, whatever the driver: here the test driver, with a probe whose answers each
// test sets (the real probes, the edge's connection and an SSH banner, are tested on real
// machines). PROVISION_TIMEOUT_MS is the wait's limit.

describe.each(databaseKinds)('a move into running waits for the machine to answer, on %s', (db) => {
  let t: TestContext;
  let client: TestClient;
  /** Per kind: how many more tries stay silent (Infinity: never answers), and every try made. */
  const probes = {} as Record<
    Kind,
    { silentTries: number; tries: { at: number; state: string }[] }
  >;

  const probe = (kind: Kind) => async (server: ServerInfo) => {
    const own = probes[kind];
    const machine = (await client.call(KINDS[kind].detail, { params: { id: server.id } })).body;
    own.tries.push({ at: performance.now(), state: machine.status });
    if (own.silentTries <= 0) return 'answered' as const;
    own.silentTries -= 1;
    return 'silent' as const;
  };

  beforeAll(async () => {
    t = await createTestContext(db, {
      env: { PROVISION_TIMEOUT_MS: '8000' },
      overrides: { machineProbes: { agent: probe('agent'), plainVm: probe('plainVm') } },
    });
    client = t.newClient();
    await signUpUser(client);
  });
  afterAll(() => t?.close());

  const expectTries = (kind: Kind, silentTries: number) => {
    probes[kind] = { silentTries, tries: [] };
    return probes[kind];
  };
  const settled = (kind: Kind, id: string) =>
    waitFor(
      async () => {
        const machine = (await client.call(KINDS[kind].detail, { params: { id } })).body;
        return (
          !['provisioning', 'starting', 'restarting', 'stopping'].includes(machine.status) &&
          machine
        );
      },
      30_000,
      `${kind} ${id} settled`,
    );
  const move = (kind: Kind, id: string, action: Move) =>
    client.call(KINDS[kind].moves[action], { params: { id } });

  describe.each(Object.keys(KINDS) as Kind[])('%s', (kind) => {
    let id = '';

    it('is running only after it answered, tried again 50 ms after the first try and twice as long after each', async () => {
      const tries = expectTries(kind, 4);
      id = (await KINDS[kind].create(client, `ready-${kind.toLowerCase()}`)).body.id;
      expect(await settled(kind, id)).toMatchObject({ status: 'running', statusReason: null });
      expect(tries.tries.map((tried) => tried.state)).toEqual(Array(5).fill('provisioning'));
      const gaps = tries.tries.slice(1).map((tried, i) => tried.at - (tries.tries[i]?.at ?? 0));
      // Lower bounds only: a loaded machine makes gaps longer, never shorter.
      expect(gaps).toHaveLength(4);
      for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(50 * 2 ** i - 5);
    });

    it('waits again after a start and a restart', async () => {
      for (const action of ['restart', 'stop', 'start'] as const) {
        const tries = expectTries(kind, action === 'stop' ? 0 : 2);
        await move(kind, id, action);
        const done = action === 'stop' ? 'stopped' : 'running';
        expect(await settled(kind, id)).toMatchObject({ status: done });
        const waitedIn = action === 'restart' ? 'restarting' : 'starting';
        expect(tries.tries.map((tried) => tried.state)).toEqual(
          action === 'stop' ? [] : Array(3).fill(waitedIn),
        );
      }
    });

    it('ends in error when it never answers: a start or restart with <move>_timeout', async () => {
      expectTries(kind, Number.POSITIVE_INFINITY);
      await move(kind, id, 'restart');
      expect(await settled(kind, id)).toMatchObject({
        status: 'error',
        statusReason: 'restart_timeout',
      });
      expect(t.compute.servers.has(id)).toBe(true);
    });

    it('ends in error when it never answers: provisioning with provisioning_timeout, the server removed', async () => {
      expectTries(kind, Number.POSITIVE_INFINITY);
      const started = performance.now();
      const mute = (await KINDS[kind].create(client, `mute-${kind.toLowerCase()}`)).body.id;
      expect(await settled(kind, mute)).toMatchObject({
        status: 'error',
        statusReason: 'provisioning_timeout',
      });
      // Given up at the deadline, PROVISION_TIMEOUT_MS after the create.
      expect(performance.now() - started).toBeGreaterThanOrEqual(7_500);
      await waitFor(() => !t.compute.servers.has(mute), 10_000, 'server removed');
    });
  });
});
