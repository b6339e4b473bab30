// The built `svc` (dist/svc.mjs and what lies beside it), made when it is missing or older than
// the sources, so that `svc` never compiles TypeScript when it starts. Plain JavaScript: the
// repository's `npx svc` runs this before anything can load TypeScript. Builds are serialized
// by a lock directory, so machines and shells starting together build once.
import { spawn } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
/** Where `npm run build:cli` builds `svc` (what the local driver's machines run). */
export const CLI_BUILD_DIR = path.join(root, 'dist');
const ENTRY = path.join(CLI_BUILD_DIR, 'svc.mjs');
/** What the build is made of: a newer file in any of these makes it stale. */
const SOURCES = [
  path.join(root, 'src'),
  path.join(root, 'scripts'),
  path.join(root, 'package.json'),
  path.join(root, '../contract/src'),
];
const LOCK = path.join(root, '.tmp/build.lock');
/** A lock this old was left by a build that died. */
const STALE_LOCK_MS = 120_000;

async function newestMtimeMs(file) {
  const info = await stat(file).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(file, { recursive: true, withFileTypes: true });
  const times = await Promise.all(
    entries
      // Tests are not part of the build.
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
      .map((entry) =>
        stat(path.join(entry.parentPath, entry.name)).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      ),
  );
  return Math.max(info.mtimeMs, ...times);
}

/** Whether dist/svc.mjs exists and no source is newer (without sources, as shipped: it exists). */
export async function isCliBuildFresh() {
  const built = await stat(ENTRY).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
  if (built === undefined) return false;
  const newest = await Promise.all(SOURCES.map(newestMtimeMs));
  return newest.every((time) => time <= built);
}

async function withLock(work) {
  await mkdir(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = await stat(LOCK).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

function build() {
  const script = path.join(root, 'scripts/build.ts');
  const tsx = import.meta.resolve('tsx');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`building svc (npm run build:cli) failed:\n${output.trim()}`));
    });
  });
}

/**
 * The path of dist/svc.mjs, built first when it is missing or stale. `onBuild` hears once that a
 * build starts (the caller says so where a person waits).
 */
export async function ensureCliBuild(options = {}) {
  if (await isCliBuildFresh()) return ENTRY;
  await withLock(async () => {
    // Another process may have built it while this one waited for the lock.
    if (await isCliBuildFresh()) return;
    options.onBuild?.();
    await build();
  });
  return ENTRY;
}
