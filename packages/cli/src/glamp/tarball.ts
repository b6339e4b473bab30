import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MAX_TARBALL_BYTES } from '@svc/contract';
import { Pack } from 'tar';
import { ParallelGzip } from './parallel-gzip.js';

/** npm's choice: zip tools mishandle the epoch, so a fixed date well after it. */
const FIXED_MTIME = new Date('1985-10-26T08:15:00Z');

export class TarballTooLargeError extends Error {
  override name = 'TarballTooLargeError';
}

/** A tarball being written: entries are added in order while earlier ones are packed. */
export interface TarballWriter {
  /** Adds a file (relative to the directory) once its bytes are in place. */
  add(path: string): void;
  /** Hears of each file once its bytes have gone into the compressor, with their count. */
  onEntryWritten(listener: (bytes: number) => void): void;
  /** Files and bytes packed so far. */
  readonly written: { files: number; bytes: number };
  /** No more entries: resolves when the file is complete (removed on failure). */
  finish(): Promise<{ size: number; sha256: string }>;
  /** Stops and removes the file. */
  abort(): Promise<void>;
}

/**
 * Starts a gzipped tarball of files under `dir` at `target`, the same bytes for the same
 * contents: entries in the order they are added (no directory recursion), fixed mtime, no
 * owner or group, modes reduced to 644 or 755, fixed gzip level, compressed on every core in
 * blocks at fixed offsets (`ParallelGzip`). Hashes while writing and fails as soon as the
 * compressed size passes `maxBytes`.
 */
export function startTarball(
  dir: string,
  target: string,
  options: { maxBytes?: number } = {},
): TarballWriter {
  const { maxBytes = MAX_TARBALL_BYTES } = options;
  const hash = createHash('sha256');
  let size = 0;
  const listeners: ((bytes: number) => void)[] = [];
  const written = { files: 0, bytes: 0 };
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes)
        return done(new TarballTooLargeError('The compressed tarball exceeds 500 MB'));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const pack = new Pack({
    cwd: dir,
    portable: true,
    noDirRecurse: true,
    mtime: FIXED_MTIME,
    onWriteEntry: (entry) => {
      if (entry.stat) entry.stat.mode = entry.stat.mode & 0o111 ? 0o755 : 0o644;
      // At most a few entries are open at once (node-tar's `jobs`), so this follows the bytes.
      entry.on('end', () => {
        const bytes = entry.stat?.size ?? 0;
        written.files += 1;
        written.bytes += bytes;
        for (const listener of listeners) listener(bytes);
      });
    },
  });
  // Fixed level: the same bytes on every run (6, gzip's default: level 9 costs time for little).
  const done = pipeline(pack, new ParallelGzip({ level: 6 }), meter, createWriteStream(target));
  // Awaited in finish or abort; a failure meanwhile (the size cap) must not go unhandled.
  done.catch(() => undefined);
  const removeOnFailure = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      await rm(target, { force: true });
      throw error;
    }
  };
  return {
    add: (file) => {
      pack.add(file);
    },
    onEntryWritten: (listener) => {
      listeners.push(listener);
    },
    written,
    finish: () =>
      removeOnFailure(
        (async () => {
          pack.end();
          await done;
          return { size, sha256: hash.digest('hex') };
        })(),
      ),
    abort: async () => {
      pack.destroy(new Error('aborted'));
      await done.catch(() => undefined);
      await rm(target, { force: true });
    },
  };
}

/** `startTarball` for a list of files known beforehand, `onEntryWritten` hearing of each. */
export async function writeTarball(
  dir: string,
  paths: readonly string[],
  target: string,
  options: { maxBytes?: number; onEntryWritten?: (bytes: number) => void } = {},
): Promise<{ size: number; sha256: string }> {
  const writer = startTarball(dir, target, options);
  if (options.onEntryWritten) writer.onEntryWritten(options.onEntryWritten);
  for (const file of paths) writer.add(file);
  return writer.finish();
}
