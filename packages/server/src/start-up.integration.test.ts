import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ENV } from '../test/test-context.js';
import { parentEnv } from '../test/test-db.js';

const MAIN = path.join(import.meta.dirname, 'main.ts');
const LOCAL_WARNING = 'COMPUTE_DRIVER=local is for development only';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The real service, as `npm start` runs it, until it exits by itself or logs `listening` (then it
 * is stopped with SIGTERM, as an operator would).
 */
function runService(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...parentEnv(), ...TEST_ENV, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service neither listened nor exited in time:\n${stdout}\n${stderr}`));
      // A start compiles the sources (tsx) and migrates: slow on a loaded machine.
    }, 90_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (stdout.includes('"msg":"listening"')) child.kill('SIGTERM');
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

// Each test starts the real service, once or more: more than the default 30 s on a loaded machine.
const START_TIMEOUT_MS = 120_000;

describe('starting with the local compute driver', () => {
  const dirs: string[] = [];
  const dataDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-start-up-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it(
    'is refused in production with a message that says why, before anything is created',
    async () => {
      const dir = await dataDir();
      const run = await runService({ NODE_ENV: 'production', DATA_DIR: dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /COMPUTE_DRIVER: "local" is refused when NODE_ENV=production; its machines are not isolated/,
      );
      expect(run.stdout).not.toContain('"msg":"listening"');
    },
    START_TIMEOUT_MS,
  );

  it(
    'is said once, plainly, in the start-up log everywhere else',
    async () => {
      const run = await runService({ NODE_ENV: 'development', DATA_DIR: await dataDir() });
      expect(run.stdout).toContain('"msg":"listening"');
      const warnings = run.stdout.split('\n').filter((line) => line.includes(LOCAL_WARNING));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] as string)).toMatchObject({
        level: 40,
        computeDriver: 'local',
      });
      expect(warnings[0]).toMatch(/not isolated.*DATA_DIR.*other machines' tokens/);
    },
    START_TIMEOUT_MS,
  );
});

describe('starting with the incus compute driver', () => {
  it(
    'is accepted in production, and stops at once, naming the socket, when Incus does not answer',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'svc-start-up-'));
      try {
        const socket = path.join(dir, 'no-incus.socket');
        const run = await runService({
          NODE_ENV: 'production',
          DATA_DIR: dir,
          COMPUTE_DRIVER: 'incus',
          INCUS_SOCKET: socket,
        });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(`Incus is unreachable at unix socket ${socket} (ENOENT)`);
        expect(run.stderr).not.toContain('COMPUTE_DRIVER:');
        expect(run.stdout).not.toContain('"msg":"listening"');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    START_TIMEOUT_MS,
  );
});
