// What `npm start` (bin/start.mjs) and `npm run admin` (bin/admin.mjs) share: run a build of
// dist/ (scripts/build.mjs), built first when it is missing or older than its sources, so that
// nothing compiles TypeScript at start. Plain JavaScript, and the freshness check only reads
// modification times: ~300 files, a few ms (scripts/build-freshness.mjs). Builds are serialized by
// a lock directory per build, so shells starting together build once.
import { enableCompileCache } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isFresh, withLock } from '../../../scripts/build-freshness.mjs';

const root = path.join(import.meta.dirname, '..');
/** What a build is made of: a newer file in any of these makes it stale. */
const SOURCES = [
  path.join(root, 'src'),
  path.join(root, 'scripts/build.mjs'),
  path.join(root, 'package.json'),
  path.join(root, '../contract/src'),
];

/**
 * Runs the build `name` (`server` or `admin`: its dist/<name>/main.mjs), building it first when
 * it is stale. Its `process.argv` is this process's: the launcher is invisible to it.
 */
export async function launch(name) {
  const entry = path.join(root, 'dist', name, 'main.mjs');
  if (!(await isFresh(entry, SOURCES))) {
    await withLock(path.join(root, `.tmp/${name}-build.lock`), async () => {
      // Another process may have built it while this one waited for the lock.
      if (await isFresh(entry, SOURCES)) return;
      process.stderr.write(`building ${name} into packages/server/dist/${name} …\n`);
      const { buildEntry } = await import('../scripts/build.mjs');
      await buildEntry(name);
    });
  }
  // V8 keeps the compiled code of the build (and of the packages it loads) on disk between starts.
  enableCompileCache();
  await import(pathToFileURL(entry).href);
}
