import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MAX_TARBALL_BYTES } from '@svc/contract';
import { create } from 'tar';
import { ParallelGzip } from './parallel-gzip.js';

/** npm's choice: zip tools mishandle the epoch, so a fixed date well after it. */
const FIXED_MTIME = new Date('1985-10-26T08:15:00Z');

export class TarballTooLargeError extends Error {
  override name = 'TarballTooLargeError';
}

/**
 * Writes a gzipped tarball of `paths` (relative to `dir`) to `target`, the same bytes for the
 * same contents: the caller's byte-ordered list (no directory recursion), fixed mtime, no owner
 * or group, modes reduced to 644 or 755, fixed gzip level, compressed on every core in blocks at
 * fixed offsets (`ParallelGzip`). Hashes while writing and stops as
 * soon as the compressed size passes `maxBytes`. `onEntryWritten` hears of each file once its
 * bytes have gone into the compressor, with their count.
 */
export async function writeTarball(
  dir: string,
  paths: readonly string[],
  target: string,
  options: { maxBytes?: number; onEntryWritten?: (bytes: number) => void } = {},
): Promise<{ size: number; sha256: string }> {
  const { maxBytes = MAX_TARBALL_BYTES, onEntryWritten } = options;
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes)
        return done(new TarballTooLargeError('The compressed tarball exceeds 500 MB'));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const pack = create(
    {
      cwd: dir,
      portable: true,
      noDirRecurse: true,
      mtime: FIXED_MTIME,
      onWriteEntry: (entry) => {
        if (entry.stat) entry.stat.mode = entry.stat.mode & 0o111 ? 0o755 : 0o644;
        // At most a few entries are open at once (node-tar's `jobs`), so this follows the bytes.
        if (onEntryWritten) entry.on('end', () => onEntryWritten(entry.stat?.size ?? 0));
      },
    },
    [...paths],
  );
  try {
    // Fixed level: the same bytes on every run (6, gzip's default: level 9 costs time for little).
    await pipeline(pack, new ParallelGzip({ level: 6 }), meter, createWriteStream(target));
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  }
  return { size, sha256: hash.digest('hex') };
}
