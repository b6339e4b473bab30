import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Logger } from '../../../logger.js';
import type { IncusClient } from './incus-client.js';

/**
 * What `btrfs qgroup show` says of the filesystem's quota accounting, by the warning it prints
 * on standard error (btrfs-progs: "rescan is running, qgroup data may be incorrect" wins over
 * "qgroup data inconsistent, rescan recommended"); no warning: the accounts are exact.
 */
export type QgroupState = 'consistent' | 'inconsistent' | 'rescanning';

export function qgroupState(showStderr: string): QgroupState {
  if (/rescan is running/i.test(showStderr)) return 'rescanning';
  if (/qgroup data inconsistent/i.test(showStderr)) return 'inconsistent';
  return 'consistent';
}

/**
 * What one check found: a rescan started (the accounts were inconsistent), or nothing to do
 * (`consistent`, `rescanning`: one already runs), or nothing to check: the pool is not btrfs,
 * or its accounts could not be read (said once in the log).
 */
export type QuotaCheck = QgroupState | 'rescan started' | 'not btrfs' | 'unreadable';

/** Runs `btrfs` with `args` (no shell); its standard output and error. */
export type BtrfsRunner = (args: readonly string[]) => Promise<{ stdout: string; stderr: string }>;

export const runBtrfs: BtrfsRunner = (args) =>
  new Promise((resolve, reject) => {
    execFile('btrfs', [...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (!error) return resolve({ stdout, stderr });
      const why = stderr.trim().split('\n').at(-1) || error.message;
      reject(new Error(`btrfs ${args.join(' ')}: ${why}`, { cause: error }));
    });
  });

/**
 * Where Incus mounts a pool: `storage-pools/<pool>` in its directory, the one its socket is in
 * (`/var/lib/incus`).
 */
export const poolMountPath = (socketPath: string, pool: string): string =>
  path.join(path.dirname(socketPath), 'storage-pools', pool);

/**
 * Keeps a btrfs pool's quota accounting exact, on the host Incus runs on. A root disk's size is
 * a quota group's limit; with many machines made and destroyed, btrfs marks its accounting
 * inconsistent (a large subvolume deleted past `drop_subtree_threshold`), and then no limit holds
 * until `btrfs quota rescan`. Each check reads the state and, inconsistent, starts a rescan (the
 * kernel runs it; this does not wait). Needs root (CAP_SYS_ADMIN) and btrfs-progs.
 */
export class IncusQuota {
  readonly #mountPath: string;
  /** The pool's driver, asked once: a pool's driver never changes. */
  #isBtrfs: boolean | undefined;
  /** An unreadable state is said once, and again after it was read once more. */
  #saidUnreadable = false;

  constructor(
    readonly client: IncusClient,
    readonly options: { readonly socketPath: string; readonly storagePool: string },
    readonly log: Logger,
    readonly btrfs: BtrfsRunner = runBtrfs,
  ) {
    this.#mountPath = poolMountPath(options.socketPath, options.storagePool);
  }

  async keepExact(): Promise<QuotaCheck> {
    const pool = this.options.storagePool;
    this.#isBtrfs ??=
      (await this.client.call<{ driver: string }>('GET', `/1.0/storage-pools/${pool}`)).driver ===
      'btrfs';
    if (!this.#isBtrfs) return 'not btrfs';
    let state: QgroupState;
    try {
      // `-f`: only the qgroups of the pool's top level, so the listing stays short; the warning
      // is the filesystem's, whatever is listed.
      state = qgroupState((await this.btrfs(['qgroup', 'show', '-f', this.#mountPath])).stderr);
    } catch (error) {
      if (!this.#saidUnreadable) {
        this.log.warn(
          { pool, path: this.#mountPath, reason: (error as Error).message },
          `cannot read the quota accounting of the btrfs pool ${pool} (run the service as root, with btrfs-progs installed): an inconsistent one, where no disk limit holds, is not rescanned`,
        );
        this.#saidUnreadable = true;
      }
      return 'unreadable';
    }
    this.#saidUnreadable = false;
    if (state !== 'inconsistent') return state;
    try {
      await this.btrfs(['quota', 'rescan', this.#mountPath]);
    } catch (error) {
      // Another process (or the operator) started one since the state was read.
      if (/in progress/i.test((error as Error).message)) return 'rescanning';
      throw error;
    }
    this.log.warn(
      { pool, path: this.#mountPath },
      `the quota accounting of the btrfs pool ${pool} was inconsistent (no disk limit holds until a rescan): started \`btrfs quota rescan\``,
    );
    return 'rescan started';
  }
}
