import { cp, lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SnapshotDriver, SnapshotTaken } from './compute-driver.js';

/** What the local driver lends its snapshots. */
export interface LocalSnapshotsHost {
  /** `DATA_DIR/snapshots`: one directory per snapshot, named after its id. */
  readonly root: string;
  /** A machine's disk: its `home/`. */
  homeOf(id: string): string;
  /** Runs `work` as the machine's one change at a time (no power-on meanwhile). */
  exclusive<T>(id: string, work: () => Promise<T>): Promise<T>;
  /** After a restore: what the disk must hold that describes the machine now (its token). */
  restored(id: string): Promise<void>;
}

// The service's own ids: a ref is never a path.
const SNAPSHOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A local machine's snapshots: a copy of its `home/` in `root/<snapshot id>/home`, copied
 * first under a `.partial` name and then renamed, so a snapshot directory is always whole and a
 * retried create finds it. A running machine's home is copied as it is (whileRunning).
 */
export class LocalSnapshots implements SnapshotDriver {
  readonly whileRunning = true;

  constructor(readonly host: LocalSnapshotsHost) {}

  #dirOf(ref: string): string {
    if (!SNAPSHOT_ID.test(ref)) throw new Error('not a snapshot of this driver');
    return path.join(this.host.root, ref);
  }

  async create(serverId: string, snapshotId: string): Promise<SnapshotTaken> {
    const dir = this.#dirOf(snapshotId);
    const copy = path.join(dir, 'home');
    if (!(await exists(copy))) {
      // DATA_DIR's rule: directories only its user reads.
      await mkdir(this.host.root, { recursive: true, mode: 0o700 });
      const partial = `${dir}.partial`;
      await rm(partial, { recursive: true, force: true });
      await mkdir(partial, { mode: 0o700 });
      await cp(this.host.homeOf(serverId), path.join(partial, 'home'), {
        recursive: true,
        verbatimSymlinks: true,
      });
      await rename(partial, dir);
    }
    return { ref: snapshotId, sizeBytes: await bytesIn(copy) };
  }

  restore(serverId: string, ref: string): Promise<void> {
    const copy = path.join(this.#dirOf(ref), 'home');
    return this.host.exclusive(serverId, async () => {
      if (!(await exists(copy))) throw new Error('the snapshot is gone');
      const home = this.host.homeOf(serverId);
      // Copied beside the home, then swapped in: the home is never half restored.
      const incoming = `${home}.restoring`;
      const replaced = `${home}.replaced`;
      await rm(incoming, { recursive: true, force: true });
      await cp(copy, incoming, { recursive: true, verbatimSymlinks: true });
      await rm(replaced, { recursive: true, force: true });
      if (await exists(home)) await rename(home, replaced);
      await rename(incoming, home);
      await rm(replaced, { recursive: true, force: true });
      await this.host.restored(serverId);
    });
  }

  async remove(_serverId: string, ref: string): Promise<void> {
    const dir = this.#dirOf(ref);
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}.partial`, { recursive: true, force: true });
  }
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** The bytes of the files under `dir` (what the copy holds). */
async function bytesIn(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await lstat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}
