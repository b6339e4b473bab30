import { randomUUID } from 'node:crypto';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { hetznerDriverForTests } from '../../../../test/hetzner/driver.js';
import { serversOf as serversOn } from '../../../../test/hetzner/enrolling-driver.js';
import type { CreateServerSpec } from '../compute-driver.js';
import { SNAPSHOT_LABEL } from './hetzner-snapshots.js';

// Snapshots through the stand-in of Hetzner Cloud's API (every exchange checked against
// Hetzner's description, HCLOUD_OPENAPI), whose servers carry a modelled disk: files by path,
// copied by create_image and written back by rebuild.

const setup = hetznerDriverForTests();

const plainVm = (id: string): CreateServerSpec => ({
  id,
  size: 'small',
  region: 'eu',
  image: 'debian-12',
  bootstrapEnv: {},
  labels: { managedBy: 'svc', kind: 'plain_vm', plainVmId: id },
  login: { user: 'debian', authorizedKeys: [] },
  firewall: DEFAULT_FIREWALL_RULES,
});

/** The machine's server in the stand-in (its disk's files are written and read there). */
const serverOf = (id: string) => {
  const [server] = serversOn(setup.standIn, id);
  if (!server) throw new Error(`no server for ${id}`);
  return server;
};
const snapshotImages = () =>
  [...setup.standIn.state.images.values()].filter((image) => image.type === 'snapshot');

describe('hetzner snapshots', () => {
  it('snapshots a running server, and a restore writes its disk back and leaves it off', async () => {
    const { snapshots } = setup.driver;
    expect(snapshots.whileRunning).toBe(true);
    const id = randomUUID();
    await setup.driver.createServer(plainVm(id));
    serverOf(id).files.set('/root/note', 'first');

    const snapshotId = randomUUID();
    const taken = await snapshots.create(id, snapshotId);
    const image = setup.standIn.state.images.get(Number(taken.ref));
    expect(image).toMatchObject({ type: 'snapshot', status: 'available' });
    expect(image?.labels).toMatchObject({ [SNAPSHOT_LABEL]: snapshotId, 'svc/machine': id });
    // Billed by image_size (GB, decimal).
    expect(taken.sizeBytes).toBe(Math.round((image?.imageSize ?? 0) * 1e9));
    expect(taken.sizeBytes).toBeGreaterThan(0);
    // A retried create finds the image the first made.
    expect(await snapshots.create(id, snapshotId)).toEqual(taken);
    expect(snapshotImages().filter((each) => each.labels['svc/machine'] === id)).toHaveLength(1);

    serverOf(id).files.set('/root/note', 'second');
    await expect(snapshots.restore(id, taken.ref)).rejects.toThrow(/is running/);
    await setup.driver.powerOff(id);
    await snapshots.restore(id, taken.ref);
    expect(serverOf(id).files.get('/root/note')).toBe('first');
    // The rebuild booted the server: the driver powered it off again.
    expect(serverOf(id).status).toBe('off');
    expect((await setup.driver.getServer(id))?.status).toBe('off');
    const commands = [...setup.standIn.state.actions.values()]
      .filter((action) => action.resources.some((r) => r.id === serverOf(id).id))
      .map((action) => action.command);
    expect(commands.slice(-2)).toEqual(['rebuild_server', 'stop_server']);

    await snapshots.remove(id, taken.ref);
    expect(setup.standIn.state.images.has(Number(taken.ref))).toBe(false);
    await snapshots.remove(id, taken.ref);
    // A new snapshot after a restore is taken afresh.
    const again = await snapshots.create(id, randomUUID());
    expect(again.ref).not.toBe(taken.ref);
    // The machine's deletion takes its snapshots with it.
    await setup.driver.deleteServer(id);
    expect(setup.standIn.state.images.has(Number(again.ref))).toBe(false);
  });

  it("turns Hetzner's refusals into errors that say what failed", async () => {
    const { snapshots } = setup.driver;
    const id = randomUUID();
    await setup.driver.createServer(plainVm(id));
    setup.standIn.faults.failActions(
      { command: 'create_image' },
      { code: 'server_error', message: 'the snapshot could not be stored' },
    );
    await expect(snapshots.create(id, randomUUID())).rejects.toThrow(
      /create_image failed: the snapshot could not be stored/,
    );
    expect(snapshotImages().filter((each) => each.labels['svc/machine'] === id)).toEqual([]);

    const taken = await snapshots.create(id, randomUUID());
    await snapshots.remove(id, taken.ref);
    await setup.driver.powerOff(id);
    await expect(snapshots.restore(id, taken.ref)).rejects.toThrow(
      /rebuild: 422 invalid_input: .*image not found/,
    );
    await expect(snapshots.restore(id, 'svc-elsewhere')).rejects.toThrow(/not a Hetzner image id/);
    await expect(snapshots.create(randomUUID(), randomUUID())).rejects.toThrow(/no server/);
    await setup.driver.deleteServer(id);
  });
});
