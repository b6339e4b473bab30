import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ADMIN_LAUNCHER } from '../packages/server/test/admin-cli.js';
import {
  freePort,
  serviceClient,
  startService,
  stopService,
} from '../packages/server/test/service-process.js';
import { TEST_ENV } from '../packages/server/test/test-context.js';

// `npm run bench -- admin [--runs N]`: how long the operator CLI takes to answer while the service
// runs (through its admin socket), against `node -e 0` in the same run, interleaved so that a busy
// machine slows all alike: `list users` and `create-user` as `npm run admin` runs them (node
// bin/admin.mjs: the freshness check, then dist/admin), once through npm itself, and as it ran
// before (the TypeScript sources through tsx). Target: an answer in under a second.

const TARGET_MS = 1000;
const ADMIN_SOURCE = path.join(import.meta.dirname, '../packages/server/src/admin/main.ts');

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : 20;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-admin-'));
  const port = await freePort();
  const env = { ...process.env, ...TEST_ENV, LOG_LEVEL: 'silent', DATA_DIR: dataDir };
  const service = startService({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
  try {
    console.log('starting the service…');
    await serviceClient(`http://127.0.0.1:${port}`).ready();
    let users = 0;
    const cases: Record<string, () => string[]> = {
      'node -e 0 (baseline)': () => [process.execPath, '-e', '0'],
      'admin list users': () => [process.execPath, ADMIN_LAUNCHER, 'list', 'users', '--json'],
      'admin create-user': () => {
        users += 1;
        const email = `bench${users}@example.com`;
        return [
          process.execPath,
          ...[ADMIN_LAUNCHER, 'create-user', '--email', email, '--name', 'Bench'],
          ...['--password', 'bench password'],
        ];
      },
      'npm run admin -- list users': () => ['npm', 'run', '-s', 'admin', '--', 'list', 'users'],
      // The sources through tsx, as `npm run admin` ran before the build.
      'tsx src, no build': () => [
        process.execPath,
        ...['--import', 'tsx', ADMIN_SOURCE, 'list', 'users'],
      ],
    };
    const timeRun = (argv: string[]) => {
      const started = performance.now();
      execFileSync(argv[0] as string, argv.slice(1), {
        env,
        cwd: path.join(import.meta.dirname, '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return performance.now() - started;
    };
    // One of each first, unmeasured: builds dist/admin if it is stale, warms the file cache.
    for (const argv of Object.values(cases)) timeRun(argv());
    const times = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]]));
    for (let n = 0; n < runs; n++) {
      for (const [name, argv] of Object.entries(cases)) times[name]?.push(timeRun(argv()));
    }
    console.log(`Node ${process.version}, service running, ${runs} runs each, interleaved`);
    const baseline = percentile(times['node -e 0 (baseline)'] ?? [], 50);
    for (const [name, ms] of Object.entries(times)) {
      const [p50, p95] = [percentile(ms, 50), percentile(ms, 95)];
      const ratio = name.includes('baseline') ? '' : `   ratio ${(p50 / baseline).toFixed(1)}×`;
      console.log(
        `${name.padEnd(30)} median ${p50.toFixed(0).padStart(5)} ms   p95 ${p95.toFixed(0).padStart(5)} ms${ratio}`,
      );
    }
    const slowest = Math.max(
      ...['admin list users', 'admin create-user', 'npm run admin -- list users'].map((name) =>
        percentile(times[name] ?? [], 50),
      ),
    );
    console.log(
      `the CLI answers in ${slowest.toFixed(0)} ms at most (medians; target < ${TARGET_MS} ms): ${slowest < TARGET_MS ? 'met' : 'NOT met'}`,
    );
  } finally {
    await stopService(service, 'SIGTERM');
    await rm(dataDir, { recursive: true, force: true });
  }
}
