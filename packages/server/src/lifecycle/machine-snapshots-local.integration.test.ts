import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Agent, Snapshot } from '@svc/contract';
import { agentSnapshots, createAgent, getAgent, startAgent, stopAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createLocalTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import type { LocalComputeDriver } from '../adapters/compute/local-compute-driver.js';

// On the local driver a snapshot is a copy of the machine's home: write a file, snapshot, change
// the file, stop, restore, start, and the file is back; deleting the snapshot removes the copy.

describe('Snapshots on the local driver', () => {
  let t: TestContext & { readonly driver: LocalComputeDriver };
  let user: TestClient;
  beforeAll(async () => {
    t = await createLocalTestContext({ env: { PROVISION_TIMEOUT_MS: '60000' } });
    user = t.newClient();
    await signUpUser(user);
  }, 60_000);
  afterAll(() => t?.close());

  const agentNow = async (id: string) =>
    (await user.call(getAgent, { params: { id } })).body as Agent;
  const statusIs = (id: string, status: Agent['status']) =>
    waitFor(async () => (await agentNow(id)).status === status, 60_000, status);
  const snapshotsDir = () => path.join(path.dirname(t.driver.root), 'snapshots');

  it('puts the home back as the snapshot has it', async () => {
    const body = { name: 'disk', size: 'small', region: 'us', billingType: 'metered' } as const;
    const { id } = (await user.call(createAgent, { body })).body;
    await statusIs(id, 'running');
    const file = path.join(t.driver.homeOf(id), 'notes.txt');
    await writeFile(file, 'before\n');

    const made = (await user.call(agentSnapshots.create, { params: { id }, body: {} })).body;
    const ready = await waitFor(
      async () =>
        (await user.call(agentSnapshots.list, { params: { id } })).body.snapshots.find(
          (s: Snapshot) => s.id === made.id && s.status === 'ready',
        ),
      30_000,
      'ready',
    );
    expect(ready.sizeBytes).toBeGreaterThanOrEqual('before\n'.length);
    const dir = path.join(snapshotsDir(), made.id);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);

    await writeFile(file, 'after\n');
    await user.call(stopAgent, { params: { id } });
    await statusIs(id, 'stopped');
    await user.call(agentSnapshots.restore, { params: { id, snapshotId: made.id } });
    await waitFor(async () => (await agentNow(id)).diskOperation === null, 30_000, 'restored');
    expect((await agentNow(id)).status).toBe('stopped');
    await user.call(startAgent, { params: { id } });
    await statusIs(id, 'running');
    expect(await readFile(file, 'utf8')).toBe('before\n');

    const removed = await user.send(agentSnapshots.remove, {
      params: { id, snapshotId: made.id },
    });
    expect(removed.status).toBe(204);
    expect(await readdir(snapshotsDir())).not.toContain(made.id);
  }, 180_000);
});
