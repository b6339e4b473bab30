import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { TestClient } from './test-client.js';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';
import { waitFor } from './wait.js';

const MAIN = path.join(import.meta.dirname, '../src/main.ts');

/** A loopback port nothing listens on now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** The real service in its own process, as `npm start` runs it. */
export function startService(
  env: Record<string, string>,
  args: readonly string[] = [],
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...parentEnv(), ...TEST_ENV, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The real service, as `npm start` runs it (on loopback, any port, logging at info), until it
 * exits by itself or logs `until` (then it is stopped with SIGTERM, as an operator would).
 */
export function runServiceUntil(
  env: Record<string, string>,
  until = 'listening',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...parentEnv(), ...TEST_ENV, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not get to "${until}" in time:\n${stdout}\n${stderr}`));
      // A start compiles the sources (tsx) and migrates: slow on a loaded machine.
    }, 90_000);
    let signalled = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      // Once: a second signal means "exit now".
      if (!signalled && stdout.includes(`"msg":"${until}"`)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Ends a service process and waits for it to be gone. */
export async function stopService(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** A client of the service at `base` over real HTTP, and a wait for it to be ready. */
export function serviceClient(base: string) {
  const http = { request: (p: string, init?: RequestInit) => fetch(`${base}${p}`, init) };
  return {
    client: new TestClient(http as never, base),
    ready: () =>
      waitFor(
        () =>
          fetch(`${base}/readyz`).then(
            (r) => r.ok,
            () => false,
          ),
        // A start compiles the TypeScript sources and migrates: slow on a loaded machine.
        90_000,
        'service up',
      ),
  };
}

/**
 * Kills the local driver's machine processes under `dataDir`: they are detached (they outlive
 * the service, as VMs do), so a test that ran the service in its own process ends them itself.
 */
export async function stopLocalMachines(dataDir: string): Promise<void> {
  const machines = path.join(dataDir, 'machines');
  for (const id of await readdir(machines).catch(() => [] as string[])) {
    try {
      const { pid } = JSON.parse(await readFile(path.join(machines, id, 'machine.json'), 'utf8'));
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
