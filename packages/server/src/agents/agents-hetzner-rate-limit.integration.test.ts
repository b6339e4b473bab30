import type { Agent } from '@svc/contract';
import { createAgent, deleteAgent, getAgent, stopAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hetznerTestContext } from '../../test/hetzner/driver.js';
import type { TestClient } from '../../test/test-client.js';
import { waitFor } from '../../test/wait.js';

// Twelve Agents through their whole life on the hetzner driver, against a stand-in of Hetzner
// Cloud whose rate limit is three requests a second with a bucket of ten: the driver paces itself
// to the RateLimit-* headers, so every Agent gets where it is going without a storm of 429s.
// (Their lives take about 200 requests: far past the bucket, so the pacing is what is tested.)

const AGENTS = 12;
const BUCKET = 10;
const REFILL_PER_SECOND = 3;

describe('twelve Agents on a Hetzner project limited to three requests a second', () => {
  let setup: Awaited<ReturnType<typeof hetznerTestContext>>;
  let client: TestClient;
  let hetzner: Awaited<ReturnType<typeof hetznerTestContext>>['hetzner'];
  beforeAll(async () => {
    setup = await hetznerTestContext({
      rateLimit: { limit: BUCKET, refillPerSecond: REFILL_PER_SECOND },
    });
    ({ client, hetzner } = setup);
  });
  afterAll(() => setup?.close());

  const statuses = async (ids: readonly string[]) =>
    Promise.all(
      ids.map(async (id) => {
        const res = await client.send(getAgent, { params: { id } });
        return res.status === 404 ? 'removed' : (res.body as Agent).status;
      }),
    );
  const allReach = (ids: readonly string[], status: string, withinMs: number) =>
    waitFor(
      async () => (await statuses(ids)).every((s) => s === status),
      withinMs,
      `all ${status}`,
    );

  it('creates, stops and destroys every one of them, with almost no 429', async () => {
    const ids: string[] = [];
    for (let i = 0; i < AGENTS; i += 1) {
      const res = await client.call(createAgent, {
        body: {
          name: `paced ${i}`,
          size: 'small',
          region: 'eu',
          billingType: 'metered',
        },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    await allReach(ids, 'running', 240_000);
    expect(hetzner.standIn.state.servers.size).toBe(AGENTS);

    for (const id of ids)
      expect((await client.call(stopAgent, { params: { id } })).status).toBe(200);
    await allReach(ids, 'stopped', 240_000);
    expect([...hetzner.standIn.state.servers.values()].every((s) => s.status === 'off')).toBe(true);

    for (const id of ids)
      expect((await client.call(deleteAgent, { params: { id } })).status).toBe(200);
    await allReach(ids, 'removed', 240_000);
    expect(hetzner.standIn.state.servers.size).toBe(0);
    expect(hetzner.standIn.state.firewalls.size).toBe(0);

    // Paced, not hammering: the few 429s are requests of another process's worth (none here)
    // or of a refill estimate one tick off, never a burst.
    const { requests, rateLimited } = hetzner.standIn.stats;
    console.info(
      `${AGENTS} Agents on the hetzner driver: ${requests} requests, ${rateLimited} answered 429`,
    );
    expect(rateLimited).toBeLessThanOrEqual(3);
  }, 780_000);
});
