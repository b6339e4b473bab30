// The built `svc` (dist/svc.mjs and what lies beside it), made when it is missing or older than
// the sources, so that `svc` never compiles TypeScript when it starts. Plain JavaScript: the
// repository's `npx svc` runs this before anything can load TypeScript. Builds are serialized
// by a lock directory, so machines and shells starting together build once.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { isFresh, withLock } from '../../../scripts/build-freshness.mjs';

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
  // The gateway's stylesheet bundles the dashboard's tokens.
  path.join(root, '../web/src/tokens.css'),
];
const LOCK = path.join(root, '.tmp/build.lock');
/** Whether dist/svc.mjs exists and no source is newer (without sources, as shipped: it exists). */
export const isCliBuildFresh = () => isFresh(ENTRY, SOURCES);

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
  await withLock(LOCK, async () => {
    // Another process may have built it while this one waited for the lock.
    if (await isCliBuildFresh()) return;
    options.onBuild?.();
    await build();
  });
  return ENTRY;
}
