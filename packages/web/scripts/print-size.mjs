// Prints the gzipped size of the built JavaScript (the budget: under 300 KB).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 300;
const assets = path.join(import.meta.dirname, '../dist/assets');
let total = 0;
for (const name of readdirSync(assets).filter((file) => file.endsWith('.js'))) {
  const gzipped = gzipSync(readFileSync(path.join(assets, name)), { level: 9 }).length;
  total += gzipped;
  console.log(`  ${name}: ${(gzipped / 1024).toFixed(1)} KB gzipped`);
}
const kb = total / 1024;
console.log(`dashboard JS: ${kb.toFixed(1)} KB gzipped (budget ${BUDGET_KB} KB)`);
if (kb > BUDGET_KB) {
  console.error('over budget');
  process.exitCode = 1;
}
