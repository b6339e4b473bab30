import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, stat } from 'node:fs/promises';
import { makeOwnerOnly } from '../util/owner-only.js';
import { ConfigError } from './config.js';

/**
 * DATA_DIR cannot be used as it is. A configuration error (the entry points print its message
 * alone), said in one line.
 */
export class DataDirError extends ConfigError {
  override name = 'DataDirError';
  constructor(message: string) {
    super([message]);
    this.message = message;
  }
}

/**
 * Makes `DATA_DIR` this user's alone before anything is written there: it holds the embedded
 * database (password hashes, sealed tokens), the development keys, local machines and mail. A
 * missing one is made 0700; one other users may read is made owner-only with everything in it
 * (answers how many entries changed, for the log); one another user owns or may write is refused,
 * since what is in it may have been planted or changed. What is created later is owner-only
 * through the process's umask (077, set first thing by each entry point).
 */
export async function secureDataDir(dir: string): Promise<{ tightened: number }> {
  const stats = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw cannot('read', dir, error);
  });
  if (!stats) {
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch((error: Error) => {
      throw cannot('made', dir, error);
    });
    // Another user may have made it (or put a link there) between the stat and the mkdir, which
    // then changes nothing: what is there now is checked as one found at start would be.
    const made = await lstat(dir).catch((error: Error) => {
      throw cannot('read', dir, error);
    });
    checkOwner(dir, made);
    await chmod(dir, 0o700);
    return { tightened: 0 };
  }
  checkOwner(dir, stats);
  // Behind an owner-only directory nothing inside is reachable by others, whatever its mode: the
  // tree is walked only when the directory itself was open (once, for a directory made before).
  if ((stats.mode & 0o077) === 0) return { tightened: 0 };
  return { tightened: await makeOwnerOnly(dir) };
}

/** Refuses what is not a directory of this user that only this user can write. */
function checkOwner(dir: string, stats: Stats): void {
  const uid = process.getuid?.();
  if (!stats.isDirectory()) throw new DataDirError(`DATA_DIR ${dir} is not a directory`);
  if (uid !== undefined && stats.uid !== uid) {
    throw new DataDirError(
      `DATA_DIR ${dir} belongs to another user (uid ${stats.uid}), not to this service's (uid ${uid}): refusing to use it`,
    );
  }
  if (stats.mode & 0o022) {
    throw new DataDirError(
      `DATA_DIR ${dir} can be written by other users (mode ${octal(stats.mode)}): refusing to use it; check what is in it, then chmod 700 it`,
    );
  }
}

/** A file system failure in one line (the entry points print it without a stack). */
const cannot = (what: 'read' | 'made', dir: string, error: Error) =>
  new DataDirError(`DATA_DIR ${dir} cannot be ${what}: ${error.message}`);

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;
