import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export interface CliFile {
  readonly relative: string;
  readonly isDirectory: boolean;
  /** The mode it is installed with (`installedMode`), not the one it has here. */
  readonly mode: number;
}

/**
 * A build file's mode on a machine: 0755 for directories and owner-executable files, else 0644.
 * Never the local one: the service runs with umask 077, so a build it makes itself is 0600/0700,
 * and installed as root that way the gateway (the `agent` user) could not read it.
 */
export const installedMode = (mode: number, isDirectory: boolean): number =>
  isDirectory || mode & 0o100 ? 0o755 : 0o644;

/** The `svc` build (`packages/cli/dist`): its files, parents first, and a hash of them all. */
export interface CliBuild {
  readonly hash: string;
  readonly files: readonly CliFile[];
}

/** Reads the build as it is now, or `undefined` when there is none (never built). */
export async function readCliBuild(dir: string): Promise<CliBuild | undefined> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return undefined;
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(entry.parentPath, entry.name);
      return {
        relative: path.relative(dir, full).split(path.sep).join('/'),
        isDirectory: entry.isDirectory(),
        mode: installedMode((await stat(full)).mode, entry.isDirectory()),
      };
    }),
  );
  files.sort((a, b) => a.relative.localeCompare(b.relative));
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file.relative}\0${file.mode}\0`);
    if (!file.isDirectory) hash.update(await readFile(path.join(dir, file.relative)));
  }
  return { hash: hash.digest('hex'), files };
}
