#!/usr/bin/env node
// `svc` in the repository (`npx svc`): the one-file build when it is at least as new as the
// sources, so it starts at once; else the TypeScript sources through tsx (slower, always current).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const here = import.meta.dirname;
const bundle = path.join(here, '../dist/svc.mjs');

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      latest = Math.max(latest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

function isFresh() {
  try {
    const built = statSync(bundle).mtimeMs;
    return [path.join(here, '../src'), path.join(here, '../../contract/src')].every(
      (dir) => newest(dir) <= built,
    );
  } catch {
    return false;
  }
}

if (isFresh()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { runAsProcess } = await import('../src/bin.ts');
  await runAsProcess();
}
