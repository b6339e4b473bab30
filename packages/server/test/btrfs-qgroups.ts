import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { IncusClient } from '../src/adapters/compute/incus/incus-client.js';
import { poolMountPath, runBtrfs } from '../src/adapters/compute/incus/incus-quota.js';
import { INCUS_SOCKET } from './incus.js';

const execFileAsync = promisify(execFile);

/** Where Incus mounts `pool` on this host. */
export const poolPath = (pool: string) => poolMountPath(INCUS_SOCKET, pool);

/** What `btrfs qgroup show` warns of the pool's accounting (empty when it is exact). */
export async function qgroupWarnings(pool: string): Promise<string> {
  return (await runBtrfs(['qgroup', 'show', '-f', poolPath(pool)])).stderr.trim();
}

/**
 * Deletes `instance` (a stopped one, in `project`) the way churn breaks the pool's accounting:
 * btrfs skips the quota accounting of a deleted subvolume whose tree is at least
 * `drop_subtree_threshold` high and marks the whole filesystem inconsistent, after which it
 * accounts nothing (no disk limit holds) until a rescan. The threshold goes to 0 for this one
 * delete (every machine's tree is that high) and back to what it was once btrfs has dropped it.
 */
export async function deleteBreakingAccounting(
  pool: string,
  project: string,
  instance: string,
): Promise<void> {
  const mount = poolPath(pool);
  const { stdout: uuid } = await execFileAsync('findmnt', ['-no', 'UUID', mount]);
  const threshold = `/sys/fs/btrfs/${uuid.trim().split('\n')[0]}/qgroups/drop_subtree_threshold`;
  const before = (await readFile(threshold, 'utf8')).trim();
  const client = new IncusClient({ socketPath: INCUS_SOCKET, project });
  try {
    await writeFile(threshold, '0');
    await client.call('DELETE', `/1.0/instances/${instance}`);
    // The delete returns before btrfs drops the subvolume, which its cleaner does in the
    // background after a commit (forced here rather than awaited, up to 30 s).
    await runBtrfs(['filesystem', 'sync', mount]);
    await runBtrfs(['subvolume', 'sync', mount]);
  } finally {
    await writeFile(threshold, before);
    client.close();
  }
}

/** Waits for a running rescan to end; starts none (`-W`). */
export async function waitForRescan(pool: string): Promise<void> {
  await runBtrfs(['quota', 'rescan', '-W', poolPath(pool)]);
}
