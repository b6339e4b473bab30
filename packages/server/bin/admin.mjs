#!/usr/bin/env node
// `npm run admin -- <command>`: the operator CLI from its build (dist/admin/main.mjs), built first
// when it is missing or older than its sources, so that a command never compiles TypeScript.
// Plain JavaScript, and the freshness check only reads modification times: ~300 files, a few ms.
// Builds are serialized by a lock directory, so shells starting together build once.
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.join(import.meta.dirname, '..');
const ENTRY = path.join(root, 'dist/admin/main.mjs');
/** What the build is made of: a newer file in any of these makes it stale. */
const SOURCES = [
  path.join(root, 'src'),
  path.join(root, 'scripts/build-admin.mjs'),
  path.join(root, 'package.json'),
  path.join(root, '../contract/src'),
];
const LOCK = path.join(root, '.tmp/admin-build.lock');
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

async function isFresh() {
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

if (!(await isFresh())) {
  await withLock(async () => {
    // Another process may have built it while this one waited for the lock.
    if (await isFresh()) return;
    process.stderr.write('building the admin CLI into packages/server/dist/admin …\n');
    const { buildAdmin } = await import('../scripts/build-admin.mjs');
    await buildAdmin();
  });
}
await import(pathToFileURL(ENTRY).href);
