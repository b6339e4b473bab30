import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './service-process.js';

const run = promisify(execFile);
const BIN_ROOT = '/usr/lib/postgresql';

/** Debian's newest PostgreSQL server binaries (`apt-get install postgresql`). */
function binDir(): string {
  const versions = existsSync(BIN_ROOT)
    ? readdirSync(BIN_ROOT).sort((a, b) => Number(b) - Number(a))
    : [];
  const found = versions.map((v) => path.join(BIN_ROOT, v, 'bin')).find((dir) => existsSync(dir));
  if (!found) throw new Error(`no PostgreSQL server under ${BIN_ROOT}: apt-get install postgresql`);
  return found;
}

/**
 * A PostgreSQL server of a test's own (a cluster in a temporary directory, on a free loopback
 * port), which the test may stop and start as an outage would, without touching the server
 * other tests share. Run as the `postgres` user when the test runs as root (the server refuses
 * root).
 */
export async function startPrivatePostgres() {
  const bin = binDir();
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (command: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args])
      : run(path.join(bin, command), args);
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () =>
    as('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  const stop = () => as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    /** Stops it (if it runs) and removes its files. */
    async remove() {
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
