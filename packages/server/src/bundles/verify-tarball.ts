import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { BundleFile, ValidationIssue } from '@svc/contract';
import { Parser, type ReadEntry } from 'tar';

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
/** Regular files under their three tar type names; everything else but directories is refused. */
const REGULAR_FILE = new Set(['File', 'OldFile', 'ContiguousFile']);
const SPECIAL_MODE_BITS = 0o7000;
/**
 * Room for what an entry costs besides its bytes: its header, a long-path extension (pax or GNU,
 * a header and up to three blocks for a 1,024-character path), and the padding of its body.
 */
const ENTRY_OVERHEAD_BYTES = 8 * BLOCK;
/** The end-of-archive blocks and the padding of the last record (tar writes 10 KiB records). */
const ARCHIVE_OVERHEAD_BYTES = 20 * BLOCK;
/** Longest pax or GNU long-name record accepted: a path is at most 1,024 characters. */
const MAX_META_ENTRY_BYTES = 8 * 1024;
const MAX_ISSUE_PATH = 1024;
const MAX_MISSING_ISSUES = 20;

/** Thrown inside the read loop to stop reading at the first refused entry. */
class Refused extends Error {
  constructor(readonly issue: ValidationIssue) {
    super(issue.message);
  }
}

const issue = (code: string, message: string, entryPath?: string): ValidationIssue => ({
  path: entryPath === undefined ? ['tarball'] : ['tarball', entryPath.slice(0, MAX_ISSUE_PATH)],
  message,
  code,
});

/** Every directory a declared file lies in: the only directory entries a tarball may carry. */
function parentDirectories(files: readonly BundleFile[]): Set<string> {
  const directories = new Set<string>();
  for (const file of files) {
    const segments = file.path.split('/');
    for (let i = 1; i < segments.length; i++) directories.add(segments.slice(0, i).join('/'));
  }
  return directories;
}

/** Relative, `/`-separated, without empty, `.` or `..` segments (a trailing `/` allowed). */
const isSafePath = (entryPath: string) =>
  !entryPath.startsWith('/') &&
  !entryPath.includes('\0') &&
  entryPath
    .replace(/\/$/, '')
    .split('/')
    .every((s) => s !== '' && s !== '.' && s !== '..');

/**
 * Reads a gzipped tarball as a stream and checks it is exactly the declared files: every entry a
 * regular file or a directory holding declared files (no link, device or FIFO), every path
 * relative without `..`, each declared file present once with its size and SHA-256, nothing
 * else, and only zeros after the end-of-archive blocks (so `tar --ignore-zeros` finds nothing
 * hidden there either). Reading stops at the first refused entry; the uncompressed bytes are
 * bounded by the declared sizes, so a compression bomb is refused early. Returns the issues,
 * none when the tarball is what was declared.
 */
export async function verifyTarball(
  tarball: Readable,
  files: readonly BundleFile[],
): Promise<ValidationIssue[]> {
  const declared = new Map(files.map((f) => [f.path, f]));
  const directories = parentDirectories(files);
  const maxBytes =
    files.reduce((sum, f) => sum + f.size, 0) +
    (files.length + directories.size) * ENTRY_OVERHEAD_BYTES +
    ARCHIVE_OVERHEAD_BYTES;
  const seen = new Set<string>();
  const verified = new Set<string>();
  let refused: ValidationIssue | undefined;
  let entryCount = 0;
  let atEnd = false;

  const parser = new Parser({
    strict: true,
    // Only gzip is a bundle's format; the stream below is already inflated, and is refused if it
    // starts like gzip again, so the parser never inflates anything itself.
    brotli: false,
    zstd: false,
    maxMetaEntrySize: MAX_META_ENTRY_BYTES,
  });
  const refuse = (found: ValidationIssue) => {
    refused ??= found;
  };
  parser.on('error', (error: Error) => {
    refuse(issue('tarball_unreadable', `Not a valid tarball: ${error.message.slice(0, 200)}`));
  });
  parser.on('eof', () => {
    atEnd = true;
  });
  // Entry types the parser does not know (sparse files, ACLs, …) and oversized extension
  // records; another tar program may still unpack them as files.
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    entryCount++;
    refuse(issue('tarball_entry_type', `A ${entry.type} entry is not a regular file`, entry.path));
  });
  parser.on('entry', (entry: ReadEntry) => {
    entryCount++;
    const found = checkEntry(entry);
    if (found) {
      refuse(found);
      entry.resume();
      return;
    }
    if (entry.type === 'Directory') {
      entry.resume();
      return;
    }
    const file = declared.get(entry.path) as BundleFile;
    const hash: Hash = createHash('sha256');
    entry.on('data', (chunk: Buffer) => hash.update(chunk));
    entry.on('end', () => {
      if (hash.digest('hex') === file.sha256) verified.add(file.path);
      else refuse(issue('tarball_mismatch', 'The bytes are not the declared ones', file.path));
    });
  });

  const checkEntry = (entry: ReadEntry): ValidationIssue | undefined => {
    const entryPath = entry.path;
    if (!isSafePath(entryPath)) {
      return issue('tarball_path', 'An absolute path, or one with `..` or `.`', entryPath);
    }
    if (entry.type === 'Directory') {
      if (!directories.has(entryPath.replace(/\/$/, '')) || entry.size !== 0) {
        return issue('tarball_unlisted', 'A directory no declared file lies in', entryPath);
      }
      return undefined;
    }
    if (!REGULAR_FILE.has(entry.type)) {
      return issue('tarball_entry_type', `A ${entry.type} entry is not a regular file`, entryPath);
    }
    // Unpacked by root, a set-user-ID file would run as its owner for anyone.
    if ((entry.mode ?? 0) & SPECIAL_MODE_BITS) {
      return issue('tarball_mode', 'Set-user-ID, set-group-ID or sticky bits', entryPath);
    }
    const file = declared.get(entryPath);
    if (!file) return issue('tarball_unlisted', 'Not in the declared file list', entryPath);
    if (seen.has(entryPath)) return issue('tarball_duplicate', 'In the tarball twice', entryPath);
    seen.add(entryPath);
    if (entry.size !== file.size) {
      return issue('tarball_mismatch', 'The size is not the declared one', entryPath);
    }
    return undefined;
  };

  let total = 0;
  let blockCount = 0;
  let carry: Buffer = Buffer.alloc(0);
  /**
   * Feeds the parser one block at a time, so the block where the archive ends is known exactly
   * and everything after it can be checked to be zeros.
   */
  const feed = (bytes: Buffer, final: boolean) => {
    let offset = 0;
    for (; offset + BLOCK <= bytes.length || (final && offset < bytes.length); offset += BLOCK) {
      const block = bytes.subarray(offset, offset + BLOCK);
      if (atEnd) {
        if (!block.equals(ZERO_BLOCK.subarray(0, block.length))) {
          throw new Refused(issue('tarball_trailing', 'Data after the end of the archive'));
        }
        continue;
      }
      if (blockCount++ === 0 && block[0] === 0x1f && block[1] === 0x8b) {
        throw new Refused(issue('tarball_unreadable', 'Not a tarball: compressed twice'));
      }
      try {
        parser.write(block);
      } catch (error) {
        // The parser reports bad input as events; a throw is bad input it did not foresee.
        refuse(issue('tarball_unreadable', `Not a valid tarball: ${String(error).slice(0, 200)}`));
      }
      if (refused) throw new Refused(refused);
    }
    return bytes.subarray(offset);
  };

  try {
    await pipeline(tarball, createGunzip(), async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) {
        if (total + chunk.length > maxBytes) {
          throw new Refused(issue('tarball_too_large', 'More bytes than the declared files'));
        }
        carry = feed(carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk, false);
        total += chunk.length;
      }
      feed(carry, true);
      parser.end();
    });
  } catch (error) {
    if (error instanceof Refused) return [error.issue];
    // zlib's own errors: not gzip, or a damaged stream. The store's errors stay errors.
    if ((error as { code?: string }).code?.startsWith('Z_')) {
      return [issue('tarball_unreadable', 'Not a gzipped tarball')];
    }
    throw error;
  }
  // An archive of nothing is two zero blocks, which the parser calls unrecognized.
  if (refused && !(entryCount === 0 && atEnd)) return [refused];

  const missing = files.filter((f) => !verified.has(f.path));
  return missing
    .slice(0, MAX_MISSING_ISSUES)
    .map((f) => issue('tarball_missing', 'A declared file is not in the tarball', f.path));
}
