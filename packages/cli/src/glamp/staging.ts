import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BundleCredential, BundleFile, BundleManifest, ScanFlag } from '@svc/contract';
import { ALWAYS_EXCLUDED, MANIFEST_FILE, STAGING_DIR } from '@svc/contract';
import {
  mergeCredentials,
  OPENCLAW_ENV,
  OPENCLAW_JSON,
  stripEnvFile,
  stripOpenclawJson,
} from './credentials.js';
import { manifestText } from './manifest-file.js';
import { MAX_SCAN_BYTES, scanBytes } from './scanner/scan.js';
import { ScanPool } from './scanner/scan-pool.js';
import { startTarball, type TarballWriter, writeTarball } from './tarball.js';
import { byteOrder, type WalkedFile, walkBundle } from './walk.js';

/** What the long steps report to (a `ProgressStep`): the totals, then files and bytes done. */
export interface StepProgress {
  begin(files: number, bytes: number): void;
  advance(files: number, bytes: number): void;
}

const totalSize = (files: readonly { size: number }[]) => files.reduce((sum, f) => sum + f.size, 0);

/** Next to the staging tree, never inside it. */
export const TARBALL_FILE = '.crabglamp/glamp-staging.tar.gz';
export const STATE_FILE = '.crabglamp/glamp-staging.json';

export interface StagedTree extends StagingDescription {
  readonly credentials: BundleCredential[];
  readonly skippedLinks: string[];
  readonly ignoreWarnings: string[];
  /** With `tarball`: the tarball, every file added, packing still under way. */
  readonly tarball?: TarballWriter;
}

/**
 * Copies what the bundle ships from the home into a fresh `~/.crabglamp/glamp-staging/`: the
 * walker's files, with the credentials of the two OpenClaw files replaced by placeholders.
 * With `manifest`, the staged bundle.json is that manifest with the credentials found (always
 * present, even when ignored). With `tarball`, each file goes into the tarball as soon as it is
 * staged, so packing and compressing overlap walking, hashing and scanning.
 */
export async function buildStagingTree(
  home: string,
  progress?: StepProgress,
  options: { manifest?: BundleManifest; tarball?: boolean } = {},
): Promise<StagedTree> {
  const stagingDir = path.join(home, STAGING_DIR);
  await rm(stagingDir, { recursive: true, force: true });
  await mkdir(stagingDir, { recursive: true });
  const walked = await walkBundle(home, ALWAYS_EXCLUDED);
  const { manifest } = options;
  if (manifest && !walked.files.some((f) => f.path === MANIFEST_FILE)) {
    const entry = { path: MANIFEST_FILE, source: '', size: 0, executable: false };
    const at = walked.files.findIndex((f) => byteOrder(f.path, MANIFEST_FILE) > 0);
    walked.files.splice(at < 0 ? walked.files.length : at, 0, entry);
  }
  progress?.begin(walked.files.length, totalSize(walked.files));
  const found: BundleCredential[][] = [];
  const pool = new ScanPool();
  const description = new Describer(pool);
  const dirs = new Set<string>();
  const ensureDir = (dir: string) => {
    if (dirs.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    dirs.add(dir);
  };
  const copyOne = async (file: WalkedFile) => {
    const target = path.join(stagingDir, file.path);
    const mode = file.executable ? 0o755 : 0o644;
    ensureDir(path.dirname(target));
    if (file.size > MAX_SCAN_BYTES) {
      // Too large to scan or hold: copied as a stream, hashed, listed as not scanned.
      await copyFile(file.source, target);
      await chmod(target, mode);
      await description.addLarge(file.path, target);
      return;
    }
    // Synchronous reads and writes: the CLI has nothing else to do meanwhile, and many small
    // files would otherwise make as many round trips through libuv's thread pool.
    let bytes: Buffer;
    if (manifest && file.path === MANIFEST_FILE) {
      // Both OpenClaw files (`.openclaw/…`) come before `bundle.json` in byte order, so every
      // credential is found by now.
      bytes = Buffer.from(manifestText({ ...manifest, credentials: mergeCredentials(found) }));
    } else bytes = readFileSync(file.source);
    if (file.path === OPENCLAW_ENV || file.path === OPENCLAW_JSON) {
      const strip = file.path === OPENCLAW_ENV ? stripEnvFile : stripOpenclawJson;
      const stripped = strip(file.path, bytes.toString('utf8'));
      bytes = Buffer.from(stripped.text);
      found.push(stripped.credentials);
    }
    writeFileSync(target, bytes, { mode });
    chmodSync(target, mode);
    // Hashed and scanned from the bytes in hand: no second read of the tree.
    await description.add(file.path, bytes);
  };
  const tarball = options.tarball
    ? startTarball(stagingDir, path.join(home, TARBALL_FILE))
    : undefined;
  try {
    for (const file of walked.files) {
      await copyOne(file);
      tarball?.add(file.path);
      progress?.advance(1, file.size);
    }
    return {
      ...(await description.result()),
      credentials: mergeCredentials(found),
      skippedLinks: walked.skippedLinks,
      ignoreWarnings: walked.ignoreWarnings,
      ...(tarball && { tarball }),
    };
  } catch (error) {
    await tarball?.abort();
    throw error;
  } finally {
    await pool.close();
  }
}

export interface StagingDescription {
  readonly files: BundleFile[];
  readonly flags: ScanFlag[];
  /** Files the scanner could not read as text (binaries, very large files). */
  readonly unscanned: string[];
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Collects the file list (with hashes) and the scan flags, one file at a time. */
export class Describer {
  readonly #files = new Map<string, BundleFile>();
  readonly #flags = new Map<string, ScanFlag[]>();
  readonly #unscanned = new Set<string>();
  readonly #pending: Promise<void>[] = [];

  constructor(readonly pool?: ScanPool) {}

  /** Hashes now; scans on the pool's threads when there is one. Waits while they are busy. */
  async add(file: string, bytes: Buffer): Promise<void> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    this.#files.set(file, { path: file, size: bytes.length, sha256 });
    const record = (found: ScanFlag[] | 'skipped') => {
      if (found === 'skipped') this.#unscanned.add(file);
      else this.#flags.set(file, found);
    };
    if (!this.pool) return record(scanBytes(file, bytes));
    // Backpressure: the caller reads the next file only when the threads can take it.
    await this.pool.ready();
    this.#pending.push(this.pool.scan(file, bytes).then(record));
  }

  async addLarge(file: string, source: string): Promise<void> {
    const size = (await stat(source)).size;
    this.#files.set(file, { path: file, size, sha256: await hashFile(source) });
    this.#unscanned.add(file);
  }

  async result(): Promise<StagingDescription> {
    await Promise.all(this.#pending);
    const files = [...this.#files.values()].sort((a, b) => byteOrder(a.path, b.path));
    return {
      files,
      flags: files.flatMap((f) => this.#flags.get(f.path) ?? []),
      unscanned: files.filter((f) => this.#unscanned.has(f.path)).map((f) => f.path),
    };
  }
}

/** Hashes and scans every file of the staging tree (what will be published, as it is now). */
export async function describeStagingTree(
  home: string,
  progress?: StepProgress,
): Promise<StagingDescription> {
  const stagingDir = path.join(home, STAGING_DIR);
  // The staging tree is already filtered: every file in it ships.
  const walked = await walkBundle(stagingDir, [], { readIgnoreFiles: false });
  progress?.begin(walked.files.length, totalSize(walked.files));
  const pool = new ScanPool();
  const description = new Describer(pool);
  try {
    for (const file of walked.files) {
      if (file.size > MAX_SCAN_BYTES) await description.addLarge(file.path, file.source);
      else await description.add(file.path, await readFile(file.source));
      progress?.advance(1, file.size);
    }
    return await description.result();
  } finally {
    await pool.close();
  }
}

/** Builds the tarball of the staging tree (deterministic; fails past 500 MB compressed). */
export async function buildStagingTarball(
  home: string,
  files: readonly BundleFile[],
  progress?: StepProgress,
) {
  progress?.begin(files.length, totalSize(files));
  return writeTarball(
    path.join(home, STAGING_DIR),
    files.map((f) => f.path),
    path.join(home, TARBALL_FILE),
    { ...(progress && { onEntryWritten: (bytes) => progress.advance(1, bytes) }) },
  );
}

/** Waits for a tarball `buildStagingTree` started, reporting what is packed (so far and on). */
export async function finishStagingTarball(
  tarball: TarballWriter,
  files: readonly BundleFile[],
  progress?: StepProgress,
) {
  if (progress) {
    progress.begin(files.length, totalSize(files));
    progress.advance(tarball.written.files, tarball.written.bytes);
    tarball.onEntryWritten((bytes) => progress.advance(1, bytes));
  }
  return tarball.finish();
}

/** Per-extension counts and bytes, largest first. */
export function extensionBreakdown(files: readonly BundleFile[]) {
  const byExt = new Map<string, { count: number; bytes: number }>();
  for (const file of files) {
    const ext = path.posix.extname(file.path).toLowerCase() || '(none)';
    const entry = byExt.get(ext) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += file.size;
    byExt.set(ext, entry);
  }
  return [...byExt]
    .map(([extension, v]) => ({ extension, ...v }))
    .sort((a, b) => b.bytes - a.bytes || a.extension.localeCompare(b.extension));
}
