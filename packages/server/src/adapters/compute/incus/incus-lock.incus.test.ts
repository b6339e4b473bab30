import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCUS_SOCKET, requireIncus } from '../../../../test/incus.js';
import { IncusClient } from './incus-client.js';
import { IncusLock } from './incus-lock.js';

// The lock every process sharing an Incus takes around firewall changes, on the real daemon:
// never two holders at once, a long task keeps it, a dead holder's lock is broken.

const client = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
const lockName = () => `svc-lock-test-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('IncusLock (real Incus)', () => {
  beforeAll(() => requireIncus());
  afterAll(() => client.close());

  it('lets one holder in at a time, also when a task outlasts the lease', async () => {
    const name = lockName();
    // A lease shorter than the tasks: only its renewal keeps others out.
    const locks = [1, 2, 3].map(
      () => new IncusLock(client, name, { leaseMs: 600, waitMs: 20_000 }),
    );
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      locks.map((lock, i) =>
        lock.run(async () => {
          inside += 1;
          most = Math.max(most, inside);
          await sleep(1_500);
          order.push(i);
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2]);
    await expect(client.call('GET', `/1.0/network-acls/${name}`)).rejects.toThrow(/not found/i);
  }, 30_000);

  it('breaks the lock of a holder that died, once its lease is over', async () => {
    const name = lockName();
    await client.call('POST', '/1.0/network-acls', {
      body: {
        name,
        config: {
          'user.svc.lock-until': String(Date.now() - 1),
          'user.svc.lock-holder': 'a process that died',
        },
      },
    });
    const ran = await new IncusLock(client, name, { waitMs: 5_000 }).run(async () => 'ran');
    expect(ran).toBe('ran');
    await expect(client.call('GET', `/1.0/network-acls/${name}`)).rejects.toThrow(/not found/i);
  });
});
