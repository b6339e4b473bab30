import { chmod, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServiceUntil } from '../../test/service-process.js';

const TIGHTENED = 'DATA_DIR was open to other users';

/**
 * The real service with its own DATA_DIR (PGlite, development keys generated there), until it
 * exits by itself or logs `until`.
 */
const runService = (dataDir: string, until: string) =>
  runServiceUntil(
    { NODE_ENV: 'development', ENCRYPTION_KEYS: '', HMAC_KEY: '', DATA_DIR: dataDir },
    until,
  );

/** Every entry under `dir` (itself included) whose mode lets anyone but the owner in. */
async function openEntries(dir: string): Promise<string[]> {
  const open: string[] = [];
  const visit = async (file: string) => {
    const stats = await lstat(file);
    if (stats.isSymbolicLink()) return;
    if (stats.mode & 0o077) open.push(`${file} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) {
      for (const name of await readdir(file)) await visit(path.join(file, name));
    }
  };
  await visit(dir);
  return open;
}

const START_TIMEOUT_MS = 120_000;

describe('DATA_DIR is the service user’s alone', () => {
  const dirs: string[] = [];
  const workDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-data-dir-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it(
    'a new one is made 0700, and the database, keys and everything else in it owner-only',
    async () => {
      const dataDir = path.join(await workDir(), 'data');
      const run = await runService(dataDir, 'applied migrations');
      expect(run.stdout).toContain('"msg":"applied migrations"');
      const names = await readdir(dataDir);
      expect(names).toEqual(expect.arrayContaining(['pglite', 'dev-keys.json']));
      expect((await lstat(path.join(dataDir, 'pglite'))).isDirectory()).toBe(true);
      expect(await openEntries(dataDir)).toEqual([]);
      expect(run.stdout).not.toContain(TIGHTENED);
    },
    START_TIMEOUT_MS,
  );

  it(
    'an existing one others may read is tightened at start, with one line in the log',
    async () => {
      const dataDir = path.join(await workDir(), 'data');
      await mkdir(path.join(dataDir, 'objects'), { recursive: true });
      await writeFile(path.join(dataDir, 'objects', 'blob'), 'x');
      await writeFile(path.join(dataDir, 'notes'), 'x');
      await chmod(path.join(dataDir, 'objects', 'blob'), 0o644);
      await chmod(path.join(dataDir, 'notes'), 0o666);
      await chmod(path.join(dataDir, 'objects'), 0o755);
      await chmod(dataDir, 0o755);
      const run = await runService(dataDir, 'listening');
      expect(run.stdout).toContain('"msg":"listening"');
      const lines = run.stdout.split('\n').filter((line) => line.includes(TIGHTENED));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, dataDir, tightened: 4 });
      expect(await openEntries(dataDir)).toEqual([]);
    },
    START_TIMEOUT_MS,
  );

  it(
    'one other users may write is refused with one line, before anything is written there',
    async () => {
      const dataDir = path.join(await workDir(), 'data');
      await mkdir(dataDir);
      await chmod(dataDir, 0o777);
      const run = await runService(dataDir, 'listening');
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `DATA_DIR ${dataDir} can be written by other users (mode 0777): refusing to use it; check what is in it, then chmod 700 it`,
      );
      expect(await readdir(dataDir)).toEqual([]);
      expect(run.stdout).not.toContain('"msg":"listening"');
    },
    START_TIMEOUT_MS,
  );
});
