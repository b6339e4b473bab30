import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

// `npm run bench -- start [--runs N]`: a restart of the service with existing data (PGlite in
// DATA_DIR, migrations applied) until `/healthz` answers, as `node bin/start.mjs` runs it (the
// freshness check, then the build) and as `npm start` does after npm's own start, each against
// `node -e 0` in the same run, interleaved. Target: under 1.5 s to /healthz.

const TARGET_MS = 1500;
const ROOT = path.join(import.meta.dirname, '..');
const LAUNCHER = path.join(ROOT, 'packages/server/bin/start.mjs');

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

async function untilHealthy(port: number, child: ChildProcess, output: () => string) {
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`the service exited with ${child.exitCode}:\n${output().slice(-2000)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Milliseconds from spawning `command` to its first healthy `/healthz`; then stops it. */
async function timeStart(command: string, args: string[], dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    await untilHealthy(port, child, () => stderr);
    return performance.now() - started;
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // The whole group: `npm start` runs the service as a child of its own.
      try {
        process.kill(-(child.pid as number), 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      await exited;
    }
    // npm may be gone before the service it ran has let go of the database: wait for the group.
    for (;;) {
      try {
        process.kill(-(child.pid as number), 0);
      } catch {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : 10;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-start-'));
  try {
    // The first start creates the data (and builds dist/server if it is stale): not measured.
    console.log('first start: creating the data, building when stale…');
    await timeStart(process.execPath, [LAUNCHER], dataDir);
    const baseline: number[] = [];
    const launcher: number[] = [];
    const npmStart: number[] = [];
    for (let n = 0; n < runs; n++) {
      const t = performance.now();
      execFileSync(process.execPath, ['-e', '0']);
      baseline.push(performance.now() - t);
      launcher.push(await timeStart(process.execPath, [LAUNCHER], dataDir));
      npmStart.push(await timeStart('npm', ['start', '--silent'], dataDir));
    }
    const base = percentile(baseline, 50);
    const line = (name: string, ms: number[]) => {
      const [p50, p95] = [percentile(ms, 50), percentile(ms, 95)];
      const ratio = ms === baseline ? '' : `   ratio ${(p50 / base).toFixed(1)}×`;
      return `${name.padEnd(34)} median ${p50.toFixed(0).padStart(6)} ms   p95 ${p95.toFixed(0).padStart(6)} ms${ratio}`;
    };
    console.log(`Node ${process.version}, PGlite, ${runs} restarts each, interleaved`);
    console.log(line('node -e 0 (baseline)', baseline));
    console.log(line('node bin/start.mjs to /healthz', launcher));
    console.log(line('npm start to /healthz', npmStart));
    const p50 = percentile(launcher, 50);
    console.log(
      `a restart answers /healthz in ${p50.toFixed(0)} ms (median; target < ${TARGET_MS} ms): ${p50 < TARGET_MS ? 'met' : `NOT met, by ${(p50 - TARGET_MS).toFixed(0)} ms`}`,
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
