import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirError, secureDataDir } from './data-dir.js';

const modeOf = async (file: string) => (await lstat(file)).mode & 0o777;

describe('secureDataDir', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-data-dir-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('makes a missing directory 0700', async () => {
    const dir = path.join(work, 'new', 'data');
    expect(await secureDataDir(dir)).toEqual({ tightened: 0 });
    expect(await modeOf(dir)).toBe(0o700);
  });

  it('tightens one others may read, everything in it, and nothing a link points to', async () => {
    const dir = path.join(work, 'open');
    const outside = path.join(work, 'outside');
    await mkdir(path.join(dir, 'machines', 'm', 'bin'), { recursive: true });
    await writeFile(path.join(dir, 'machines', 'm', 'bin', 'svc'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(dir, 'notes'), 'x');
    await writeFile(outside, 'x');
    await chmod(outside, 0o644);
    await chmod(path.join(dir, 'notes'), 0o666);
    await symlink(outside, path.join(dir, 'link'));
    for (const sub of ['machines', 'machines/m', 'machines/m/bin', '.']) {
      await chmod(path.join(dir, sub), 0o755);
    }
    // The directory, three below it, the script and the file.
    expect(await secureDataDir(dir)).toEqual({ tightened: 6 });
    expect(await modeOf(dir)).toBe(0o700);
    expect(await modeOf(path.join(dir, 'machines', 'm'))).toBe(0o700);
    expect(await modeOf(path.join(dir, 'machines', 'm', 'bin', 'svc'))).toBe(0o700);
    expect(await modeOf(path.join(dir, 'notes'))).toBe(0o600);
    expect(await modeOf(outside)).toBe(0o644);
    // Once owner-only, a start changes nothing.
    expect(await secureDataDir(dir)).toEqual({ tightened: 0 });
  });

  it('says in one line why a missing one cannot be made, a link put in its place included', async () => {
    const file = path.join(work, 'a-file');
    await writeFile(file, 'x');
    const underFile = path.join(file, 'data');
    await expect(secureDataDir(underFile)).rejects.toThrow(
      new DataDirError(
        `DATA_DIR ${underFile} cannot be read: ENOTDIR: not a directory, stat '${underFile}'`,
      ),
    );
    // A link to nowhere (planted where DATA_DIR is to be) reads as missing, and is not followed.
    const link = path.join(work, 'dangling');
    await symlink(path.join(work, 'nowhere'), link);
    const error = await secureDataDir(link).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DataDirError);
    expect((error as Error).message).toMatch(
      new RegExp(`^DATA_DIR ${link} cannot be made: E[A-Z]+: `),
    );
    expect((error as Error).message).not.toContain('\n');
  });

  it('refuses one other users may write, and one of another user', async () => {
    for (const mode of [0o777, 0o770, 0o702]) {
      const dir = await mkdtemp(path.join(work, 'writable-'));
      await chmod(dir, mode);
      await expect(secureDataDir(dir)).rejects.toThrow(
        new DataDirError(
          `DATA_DIR ${dir} can be written by other users (mode 0${mode.toString(8)}): refusing to use it; check what is in it, then chmod 700 it`,
        ),
      );
      expect(await modeOf(dir)).toBe(mode);
    }
    // Run as root (CI is): an unprivileged run cannot give a directory away, and fails here.
    const theirs = await mkdtemp(path.join(work, 'theirs-'));
    await chown(theirs, 4242, 4242);
    await expect(secureDataDir(theirs)).rejects.toThrow(/belongs to another user \(uid 4242\)/);
  });

  it('refuses a file', async () => {
    const file = path.join(work, 'file');
    await writeFile(file, 'x');
    await expect(secureDataDir(file)).rejects.toThrow(/is not a directory/);
  });
});
