import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';

/** What differs between the two machine kinds in these requests. */
const KINDS = {
  agent: {
    path: '/api/agents',
    create: { size: 'small', region: 'eu', billingType: 'metered' },
  },
  plainVm: {
    path: '/api/plain-vms',
    create: {
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
    },
  },
} as const;
type Kind = keyof typeof KINDS;

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
    const machine = (await client.get(`${KINDS[kind].path}/${server.id}`)).body;
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
        const machine = (await client.get(`${KINDS[kind].path}/${id}`)).body;
        return (
          !['provisioning', 'starting', 'restarting', 'stopping'].includes(machine.status) &&
          (machine as { status: string; statusReason: string | null })
        );
      },
      30_000,
      `${kind} ${id} settled`,
    );
  const move = async (kind: Kind, id: string, action: string) => {
    expect((await client.post(`${KINDS[kind].path}/${id}/${action}`)).status).toBeLessThan(300);
  };

  describe.each(Object.keys(KINDS) as Kind[])('%s', (kind) => {
    let id = '';

    it('is running only after it answered, tried again 50 ms after the first try and twice as long after each', async () => {
      const tries = expectTries(kind, 4);
      const res = await client.post(KINDS[kind].path, {
        name: `ready-${kind.toLowerCase()}`,
        ...KINDS[kind].create,
      });
      expect(res.status).toBe(201);
      id = res.body.id;
      expect(await settled(kind, id)).toMatchObject({ status: 'running', statusReason: null });
      expect(tries.tries.map((tried) => tried.state)).toEqual(Array(5).fill('provisioning'));
      const gaps = tries.tries.slice(1).map((tried, i) => tried.at - (tries.tries[i]?.at ?? 0));
      // Lower bounds only: a loaded machine makes gaps longer, never shorter.
      expect(gaps).toHaveLength(4);
      for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(50 * 2 ** i - 5);
    });

    it('waits again after a start and a restart', async () => {
      for (const action of ['restart', 'stop', 'start']) {
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
      const res = await client.post(KINDS[kind].path, {
        name: `mute-${kind.toLowerCase()}`,
        ...KINDS[kind].create,
      });
      expect(await settled(kind, res.body.id)).toMatchObject({
        status: 'error',
        statusReason: 'provisioning_timeout',
      });
      // Given up at the deadline, PROVISION_TIMEOUT_MS after the create.
      expect(performance.now() - started).toBeGreaterThanOrEqual(7_500);
      await waitFor(() => !t.compute.servers.has(res.body.id), 10_000, 'server removed');
    });
  });
});
