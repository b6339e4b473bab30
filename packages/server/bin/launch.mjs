// What `npm start` (bin/start.mjs) and `npm run admin` (bin/admin.mjs) share: run a build of
// dist/ (scripts/build.mjs), built first when it is missing or older than its sources, so that
// nothing compiles TypeScript at start. Plain JavaScript, and the freshness check only reads
// modification times: ~300 files, a few ms. Builds are serialized by a lock directory per build,
// so shells starting together build once.
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { enableCompileCache } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.join(import.meta.dirname, '..');
/** What a build is made of: a newer file in any of these makes it stale. */
const SOURCES = [
  path.join(root, 'src'),
  path.join(root, 'scripts/build.mjs'),
  path.join(root, 'package.json'),
  path.join(root, '../contract/src'),
];
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

async function isFresh(entry) {
  const built = await stat(entry).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
  if (built === undefined) return false;
  const newest = await Promise.all(SOURCES.map(newestMtimeMs));
  return newest.every((time) => time <= built);
}

async function withLock(lock, work) {
  await mkdir(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Runs the build `name` (`server` or `admin`: its dist/<name>/main.mjs), building it first when
 * it is stale. Its `process.argv` is this process's: the launcher is invisible to it.
 */
export async function launch(name) {
  const entry = path.join(root, 'dist', name, 'main.mjs');
  if (!(await isFresh(entry))) {
    await withLock(path.join(root, `.tmp/${name}-build.lock`), async () => {
      // Another process may have built it while this one waited for the lock.
      if (await isFresh(entry)) return;
      process.stderr.write(`building ${name} into packages/server/dist/${name} …\n`);
      const { buildEntry } = await import('../scripts/build.mjs');
      await buildEntry(name);
    });
  }
  // V8 keeps the compiled code of the build (and of the packages it loads) on disk between starts.
  enableCompileCache();
  await import(pathToFileURL(entry).href);
}
