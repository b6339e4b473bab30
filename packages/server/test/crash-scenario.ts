import type { ChildProcess } from 'node:child_process';
import { Agent, createAgent, deleteAgent, getAgent, signUp, stopAgent } from '@svc/contract';
import { expect } from 'vitest';
import { serviceClient, stopService } from './service-process.js';
import { waitFor } from './wait.js';

// The crash-recovery scenario both crash tests play (the local driver's and Incus's): a user
// with two running Agents; three moves left in flight by a process killed with SIGKILL; then,
// after the next start, each move finished or timed out.

export interface InFlight {
  readonly toStop: Agent;
  readonly toDestroy: Agent;
  readonly provisioning: Agent;
}

/** The service at `base`, seen through its API by one signed-up user. */
export function crashScenario(base: string, runningWithinMs: number) {
  const { client, ready } = serviceClient(base);
  const create = async () =>
    (
      await client.call(createAgent, {
        body: { name: 'crash', size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
  /** The Agent's state, or `removed` once its detail answers 404. */
  const stateOf = async (id: string) => {
    const res = await client.send(getAgent, { params: { id } });
    return res.status === 404 ? 'removed' : Agent.parse(res.body).status;
  };
  return {
    client,
    ready,
    stateOf,

    /** Signs up and makes two running Agents (one to stop, one to destroy). */
    async prepare() {
      await client.call(signUp, {
        body: { email: 'crash@example.com', password: 'crash test pw', name: 'Crash' },
      });
      const agents = [await create(), await create()];
      for (const agent of agents) {
        await waitFor(async () => (await stateOf(agent.id)) === 'running', runningWithinMs);
      }
      return agents as [Agent, Agent];
    },

    /**
     * Three moves in flight on `apiOnly` (a process that runs no jobs, so none can finish), then
     * that process dies without any chance to clean up.
     */
    async leaveInFlight(apiOnly: ChildProcess, [toStop, toDestroy]: [Agent, Agent]) {
      await ready();
      const provisioning = await create();
      await client.call(stopAgent, { params: { id: toStop.id } });
      await client.call(deleteAgent, { params: { id: toDestroy.id } });
      expect(await stateOf(provisioning.id)).toBe('provisioning');
      expect(await stateOf(toStop.id)).toBe('stopping');
      expect(await stateOf(toDestroy.id)).toBe('destroying');
      await stopService(apiOnly, 'SIGKILL');
      await expect(fetch(`${base}/readyz`)).rejects.toThrow(TypeError);
      return { toStop, toDestroy, provisioning } satisfies InFlight;
    },

    /** After the next start: the stop and the destroy resumed, the provisioning timed out. */
    async expectRecovered({ toStop, toDestroy, provisioning }: InFlight, withinMs: number) {
      await ready();
      await waitFor(async () => (await stateOf(toStop.id)) === 'stopped', withinMs, 'stop resumed');
      await waitFor(
        async () => (await stateOf(toDestroy.id)) === 'removed',
        withinMs,
        'destroy resumed',
      );
      await waitFor(
        async () => (await stateOf(provisioning.id)) === 'error',
        withinMs,
        'provisioning timed out',
      );
      expect(
        (await client.call(getAgent, { params: { id: provisioning.id } })).body.statusReason,
      ).toBe('provisioning_timeout');
    },
  };
}
