// Prints the gzipped size of the built JavaScript (the budget: under 300 KB), and fails
// when one chunk passes the 500 kB (minified) at which Vite warns: the pages are split by route.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 300;
const CHUNK_LIMIT_KB = 500;
const assets = path.join(import.meta.dirname, '../dist/assets');
let total = 0;
const chunks = readdirSync(assets).filter((file) => file.endsWith('.js'));
for (const name of chunks) {
  const code = readFileSync(path.join(assets, name));
  const gzipped = gzipSync(code, { level: 9 }).length;
  total += gzipped;
  if (code.length / 1000 > CHUNK_LIMIT_KB) {
    console.error(`${name} is over ${CHUNK_LIMIT_KB} kB: split it`);
    process.exitCode = 1;
  }
  // The shared chunks; each page's own is a few KB.
  if (gzipped > 8 * 1024) console.log(`  ${name}: ${(gzipped / 1024).toFixed(1)} KB gzipped`);
}
const kb = total / 1024;
console.log(
  `dashboard JS: ${kb.toFixed(1)} KB gzipped in ${chunks.length} chunks (budget ${BUDGET_KB} KB)`,
);
if (kb > BUDGET_KB) {
  console.error('over budget');
  process.exitCode = 1;
}
