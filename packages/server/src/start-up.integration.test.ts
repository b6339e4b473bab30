import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayCaEnv } from '../test/gateway-ca-env.js';
import { runServiceUntil as runService } from '../test/service-process.js';

const LOCAL_WARNING = 'COMPUTE_DRIVER=local is for development only';

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
          // Production with a cloud driver needs the gateway CA (GATEWAY_CA_CERT, _KEY).
          ...(await gatewayCaEnv()),
        });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(`Incus is unreachable at unix socket ${socket} (ENOENT)`);
        // One line for the operator, no stack trace.
        expect(run.stderr).not.toMatch(/^\s+at /m);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(run.stderr).not.toContain('COMPUTE_DRIVER:');
        expect(run.stdout).not.toContain('"msg":"listening"');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    START_TIMEOUT_MS,
  );
});
