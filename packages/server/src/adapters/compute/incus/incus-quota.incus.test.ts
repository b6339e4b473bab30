import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deleteBreakingAccounting,
  qgroupWarnings,
  waitForRescan,
} from '../../../../test/btrfs-qgroups.js';
import {
  createIncusProject,
  INCUS_POOL,
  INCUS_SOCKET,
  incusDriverOptions,
} from '../../../../test/incus.js';
import { waitFor } from '../../../../test/wait.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';
import { IncusQuota, qgroupState } from './incus-quota.js';

const execFileAsync = promisify(execFile);

// The btrfs pool's accounting made inconsistent on purpose, as churn does, then the driver's
// reconcile pass rescans it (incus-storage.incus.test.ts shows the disk limit lost and back).

describe('the btrfs pool quota accounting', { timeout: 120_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let client: IncusClient;
  let driver: IncusComputeDriver;
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const names: string[] = [];

  /** A machine's disk, stopped, to delete: a clone of its image. */
  const makeDisk = async () => {
    const name = `quota-${randomUUID().slice(0, 8)}`;
    names.push(name);
    await client.call('POST', '/1.0/instances', {
      body: { name, type: 'container', source: { type: 'image', alias: 'debian-12' } },
    });
    return name;
  };

  beforeAll(async () => {
    project = await createIncusProject();
    client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    driver = new IncusComputeDriver(incusDriverOptions(project.name), log);
    await driver.connect();
  }, 60_000);

  afterAll(async () => {
    for (const name of names) {
      await client?.call('DELETE', `/1.0/instances/${name}`).catch(() => {});
    }
    await driver?.close();
    client?.close();
    await project?.remove();
  });

  it('is rescanned by the reconcile pass when inconsistent, and exact again after', async () => {
    // Whatever earlier runs left, the service's pass leaves it exact.
    await driver.reconcile();
    await waitForRescan(INCUS_POOL);
    expect(await qgroupWarnings(INCUS_POOL)).toBe('');

    await deleteBreakingAccounting(INCUS_POOL, project.name, await makeDisk());
    const warning = await qgroupWarnings(INCUS_POOL);
    expect(warning).toMatch(/qgroup data inconsistent, rescan recommended/);
    expect(qgroupState(warning)).toBe('inconsistent');

    lines.length = 0;
    await driver.reconcile();
    const said = lines.filter((line) => /quota accounting/.test(line.msg));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 40 });
    expect(said[0]?.msg).toMatch(/was inconsistent .* started `btrfs quota rescan`/);

    await waitForRescan(INCUS_POOL);
    expect(await qgroupWarnings(INCUS_POOL)).toBe('');
    // Exact: the next pass has nothing to do and says nothing.
    lines.length = 0;
    await driver.reconcile();
    expect(lines.filter((line) => /quota accounting/.test(line.msg))).toEqual([]);
  });

  it("is rescanned on the driver's own timer, with no reconcile pass (no job worker)", async () => {
    const timed = new IncusComputeDriver(
      incusDriverOptions(project.name, { hostGuardRenewMs: 500 }),
      log,
    );
    await timed.connect();
    try {
      lines.length = 0;
      await deleteBreakingAccounting(INCUS_POOL, project.name, await makeDisk());
      // Seen by a tick (maybe before the delete above had waited for btrfs to drop the disk).
      await waitFor(
        () => lines.some((line) => /was inconsistent/.test(line.msg)),
        30_000,
        'the timer to rescan',
      );
      await waitForRescan(INCUS_POOL);
      expect(await qgroupWarnings(INCUS_POOL)).toBe('');
    } finally {
      await timed.close();
    }
  });

  it('reads a running rescan as one, leaving it to finish', () => {
    expect(qgroupState('WARNING: rescan is running, qgroup data may be incorrect\n')).toBe(
      'rescanning',
    );
    expect(qgroupState('')).toBe('consistent');
  });

  it('says once, and fails no pass, when btrfs cannot read the pool', async () => {
    const missing = new IncusQuota(
      client,
      { socketPath: INCUS_SOCKET, storagePool: INCUS_POOL },
      log,
      // A host without btrfs-progs.
      (args) => execFileAsync('btrfs-not-installed', [...args]),
    );
    lines.length = 0;
    expect(await missing.keepExact()).toBe('unreadable');
    expect(await missing.keepExact()).toBe('unreadable');
    expect(lines.filter((line) => /cannot read the quota accounting/.test(line.msg))).toHaveLength(
      1,
    );
  });
});
