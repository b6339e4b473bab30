import { updatePlainVm } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackupDays } from '../../test/backup-days.js';
import { hetznerTestContext } from '../../test/hetzner/driver.js';
import { runningPlainVm } from '../../test/plain-vm.js';

// Daily backups on the hetzner driver against the stand-in of Hetzner Cloud: over three days with
// keep 2 the job leaves the newest two backups, as snapshot images at Hetzner and in the list.

describe('Daily backups on the hetzner driver', () => {
  let setup: Awaited<ReturnType<typeof hetznerTestContext>>;
  beforeAll(async () => {
    setup = await hetznerTestContext();
  });
  afterAll(() => setup?.close());

  it('keeps exactly `keep` backups, at Hetzner too', async () => {
    const { t, client, hetzner } = setup;
    const id = await runningPlainVm(client, 'backed-up', 30_000);
    await client.call(updatePlainVm, {
      params: { id },
      body: { backups: { enabled: true, keep: 2 } },
    });
    const { names, snapshots } = await runBackupDays(t, client, { kind: 'plain_vm', id }, 3);
    expect(snapshots.map((s) => s.name)).toEqual(names.slice(-2).reverse());
    const images = [...hetzner.standIn.state.images.values()].filter(
      (image) => image.type === 'snapshot',
    );
    expect(images).toHaveLength(2);
  }, 180_000);
});
