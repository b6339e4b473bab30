import { describe, expect, it } from 'vitest';
import { Readiness, ReadinessMoveRefused, type ReadinessState } from './readiness.js';

const healthy = async () => ({ database: true, migrations: true });

/** A readiness walked to `state` along allowed moves. */
function at(state: ReadinessState): Readiness {
  const readiness = new Readiness();
  const path: Record<ReadinessState, readonly ReadinessState[]> = {
    loading: [],
    starting: ['starting'],
    ready: ['starting', 'ready'],
    failed: ['starting', 'failed'],
    stopping: ['starting', 'ready', 'stopping'],
  };
  for (const step of path[state]) {
    if (step === 'failed') readiness.fail(new Error('start failed'));
    else readiness.move(step as Exclude<ReadinessState, 'failed'>);
  }
  return readiness;
}

describe('Readiness', () => {
  it('goes loading → starting → ready → stopping, and is started from ready on', async () => {
    const readiness = new Readiness();
    const seen: [ReadinessState, boolean][] = [[readiness.state, readiness.started]];
    for (const to of ['starting', 'ready', 'stopping'] as const) {
      readiness.move(to);
      seen.push([readiness.state, readiness.started]);
    }
    expect(seen).toEqual([
      ['loading', false],
      ['starting', false],
      ['ready', true],
      ['stopping', true],
    ]);
  });

  it.each([
    ['loading', 'ready'],
    ['ready', 'starting'],
    ['stopping', 'stopping'],
    ['failed', 'ready'],
  ] as const)('refuses the move from %s to %s and stays where it was', (from, to) => {
    const readiness = at(from);
    expect(() => readiness.move(to)).toThrow(ReadinessMoveRefused);
    expect(() => readiness.move(to)).toThrow(`readiness cannot move from ${from} to ${to}`);
    expect(readiness.state).toBe(from);
  });

  it("stops during the start, never started, and refuses the start's late end", () => {
    const readiness = at('starting');
    readiness.move('stopping');
    expect([readiness.state, readiness.started]).toEqual(['stopping', false]);
    expect(() => readiness.move('ready')).toThrow(ReadinessMoveRefused);
    expect(readiness.state).toBe('stopping');
  });

  it('refuses to fail once ready or stopping: a failure after the start is no failed start', () => {
    for (const state of ['ready', 'stopping', 'failed'] as const) {
      const readiness = at(state);
      expect(() => readiness.fail(new Error('late'))).toThrow(ReadinessMoveRefused);
      expect(readiness.state).toBe(state);
    }
  });

  it('holds requests only while the start runs, and hands them its error when it fails', async () => {
    expect(at('loading').whenServing()).toBeUndefined();
    expect(at('ready').whenServing()).toBeUndefined();

    const readiness = at('starting');
    let served = false;
    const waiting = readiness.whenServing()?.then(() => {
      served = true;
    });
    expect(waiting).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(served).toBe(false);
    readiness.move('ready');
    await waiting;
    expect(served).toBe(true);

    const failing = at('starting');
    const refused = failing.whenServing();
    failing.fail(new Error('migration 42 failed'));
    await expect(refused).rejects.toThrow('migration 42 failed');
    // A request that comes after the failure gets the same error.
    await expect(failing.whenServing()).rejects.toThrow('migration 42 failed');
  });

  it('reports ready only when started and the database is reachable and migrated', async () => {
    expect(await at('loading').report()).toEqual({
      ready: false,
      body: {
        status: 'not_ready',
        checks: { database: false, migrations: false, started: false, stopping: false },
      },
    });
    expect(await at('starting').report(healthy)).toEqual({
      ready: false,
      body: {
        status: 'not_ready',
        checks: { database: true, migrations: true, started: false, stopping: false },
      },
    });
    expect(await at('ready').report(healthy)).toEqual({
      ready: true,
      body: {
        status: 'ready',
        checks: { database: true, migrations: true, started: true, stopping: false },
      },
    });
    const unmigrated = async () => ({ database: true, migrations: false });
    expect((await at('ready').report(unmigrated)).ready).toBe(false);
    // Draining: started, reachable, migrated, and not ready, so a load balancer looks elsewhere.
    expect(await at('stopping').report(healthy)).toMatchObject({
      ready: false,
      body: { status: 'not_ready', checks: { started: true, stopping: true } },
    });
  });
});
