// What the repository's launchers share (packages/server/bin/launch.mjs for `npm start` and
// `npm run admin`, packages/cli/bin/ensure-build.js for `npx svc` and the machines' `svc`): is a
// build at least as new as its sources, and one build at a time. Plain JavaScript: they run it
// before anything can load TypeScript. The check only reads modification times.
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** A lock this old was left by a build that died. */
const STALE_LOCK_MS = 120_000;

/** The newest modification time in `file` (a folder: every file in it but tests), 0 if absent. */
export async function newestMtimeMs(file) {
  const info = await stat(file).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(file, { recursive: true, withFileTypes: true });
  const times = await Promise.all(
    entries
      // Tests are not part of a build.
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

/** Whether `entry` exists and nothing in `sources` is newer. */
export async function isFresh(entry, sources) {
  const built = await stat(entry).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
  if (built === undefined) return false;
  const newest = await Promise.all(sources.map(newestMtimeMs));
  return newest.every((time) => time <= built);
}

/** Runs `work` holding the lock directory `lock` (taken over when a dead build left it). */
export async function withLock(lock, work) {
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
