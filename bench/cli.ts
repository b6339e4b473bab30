import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ensureCliBuild } from '../packages/cli/bin/ensure-build.js';

// `npm run bench -- cli [--runs N]`: how long `svc --help` takes to start and print, as machines
// run it (node dist/svc.mjs) and as the repository's `npx svc` does after npm's own start
// (node bin/svc.js: the freshness check, then the build), each against `node -e 0` in the same
// run, interleaved so that a busy machine slows all three alike. Target: svc under 150 ms.

const TARGET_MS = 150;
const bin = path.join(import.meta.dirname, '../packages/cli/bin/svc.js');

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

function timeRun(args: string[]): number {
  const started = performance.now();
  execFileSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return performance.now() - started;
}

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : 30;
  const entry = await ensureCliBuild({ onBuild: () => console.log('building svc first…') });
  const cases = {
    'node -e 0 (baseline)': ['-e', '0'],
    'svc --help (dist/svc.mjs)': [entry, '--help'],
    'npx svc --help (bin/svc.js)': [bin, '--help'],
  };
  const times = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]]));
  // One of each first, unmeasured: the file system cache is warm for all.
  for (const argv of Object.values(cases)) timeRun(argv);
  for (let n = 0; n < runs; n++) {
    for (const [name, argv] of Object.entries(cases)) times[name]?.push(timeRun(argv));
  }
  console.log(`Node ${process.version}, ${runs} runs each, interleaved`);
  const baseline = percentile(times['node -e 0 (baseline)'] ?? [], 50);
  for (const [name, ms] of Object.entries(times)) {
    const [p50, p95] = [percentile(ms, 50), percentile(ms, 95)];
    const ratio = name.includes('baseline') ? '' : `   ratio ${(p50 / baseline).toFixed(2)}×`;
    console.log(
      `${name.padEnd(30)} median ${p50.toFixed(1).padStart(6)} ms   p95 ${p95.toFixed(1).padStart(6)} ms${ratio}`,
    );
  }
  const svc = percentile(times['svc --help (dist/svc.mjs)'] ?? [], 50);
  console.log(
    `svc starts in ${svc.toFixed(0)} ms (median; target < ${TARGET_MS} ms): ${svc < TARGET_MS ? 'met' : 'NOT met'}`,
  );
}
