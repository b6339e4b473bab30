import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TarballTooLargeError, writeTarball } from './tarball.js';
import { byteOrder } from './walk.js';

const FILES: Record<string, string> = {
  'README.md': '# hi\n',
  'b/Z.txt': 'upper',
  'b/a.txt': 'lower',
  'run.sh': '#!/bin/sh\n',
  'é.txt': 'accent',
};

describe('deterministic tarball', () => {
  let dir = '';
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function tree(root: string, mtime: Date, mode: number) {
    for (const [file, text] of Object.entries(FILES)) {
      const full = path.join(root, file);
      await mkdir(path.dirname(full), { recursive: true });
      await writeFile(full, text);
      await chmod(full, file === 'run.sh' ? 0o700 : mode);
      await utimes(full, mtime, mtime);
    }
  }
  const sha = async (file: string) =>
    createHash('sha256')
      .update(await readFile(file))
      .digest('hex');

  it('gives the same bytes for the same contents, whatever the mtimes and modes', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-tar-'));
    const paths = Object.keys(FILES).sort(byteOrder);
    await tree(path.join(dir, 'one'), new Date('2020-01-01'), 0o644);
    await tree(path.join(dir, 'two'), new Date('2024-06-30'), 0o600);
    const one = await writeTarball(path.join(dir, 'one'), paths, path.join(dir, 'one.tgz'));
    const again = await writeTarball(path.join(dir, 'one'), paths, path.join(dir, 'again.tgz'));
    const two = await writeTarball(path.join(dir, 'two'), paths, path.join(dir, 'two.tgz'));
    expect(again).toEqual(one);
    expect(two).toEqual(one);
    expect(await sha(path.join(dir, 'two.tgz'))).toBe(one.sha256);
    // Different contents, different bytes: the test can fail.
    await writeFile(path.join(dir, 'two', 'b/a.txt'), 'changed');
    const changed = await writeTarball(path.join(dir, 'two'), paths, path.join(dir, 'c.tgz'));
    expect(changed.sha256).not.toBe(one.sha256);
  });

  it('reports each file once, with its size, as it goes into the tarball', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-tar-'));
    await tree(dir, new Date(), 0o644);
    const reported: number[] = [];
    await writeTarball(dir, Object.keys(FILES), path.join(dir, 'out.tgz'), {
      onEntryWritten: (bytes) => reported.push(bytes),
    });
    expect(reported.sort()).toEqual(
      Object.values(FILES)
        .map((t) => Buffer.byteLength(t))
        .sort(),
    );
  });

  it('stops past the size cap and leaves no file behind', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-tar-'));
    await tree(dir, new Date(), 0o644);
    const target = path.join(dir, 'big.tgz');
    await expect(
      writeTarball(dir, Object.keys(FILES), target, { maxBytes: 10 }),
    ).rejects.toBeInstanceOf(TarballTooLargeError);
    await expect(readFile(target)).rejects.toThrow();
  });
});
