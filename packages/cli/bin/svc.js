#!/usr/bin/env node
// `svc` in the repository (`npx svc`): always the built `svc` (dist/svc.mjs), built first when it
// is missing or older than the sources, so it never compiles TypeScript when it starts.
import { ensureCliBuild } from './ensure-build.js';

const entry = await ensureCliBuild({
  onBuild: () =>
    process.stderr.write('svc: the sources changed; building svc first (npm run build:cli)\n'),
});
await import(entry);
