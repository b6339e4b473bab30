import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { BundleFile } from '@svc/contract';
import { Pax } from 'tar';
import { describe, expect, it } from 'vitest';
import { writeTarball } from '../../../cli/src/glamp/tarball.js';
import { sha256, type TarEntry, tarBlocks, tarGz } from '../../test/bundle-test-helpers.js';
import { verifyTarball } from './verify-tarball.js';

const files = {
  'README.md': Buffer.from('# Hello\n'),
  'src/app.js': Buffer.from('console.log(1);\n'),
  'src/lib/util.js': Buffer.from('export const x = 1;\n'),
  'src/__init__.py': Buffer.alloc(0),
};
const declared: BundleFile[] = Object.entries(files).map(([p, bytes]) => ({
  path: p,
  size: bytes.length,
  sha256: sha256(bytes),
}));
const honest: TarEntry[] = Object.entries(files).map(([p, body]) => ({ path: p, body }));

const verify = (tarball: Buffer, list: readonly BundleFile[] = declared) =>
  verifyTarball(Readable.from([tarball]), list);
const codes = async (tarball: Buffer, list?: readonly BundleFile[]) =>
  (await verify(tarball, list)).map((i) => [i.code, i.path[1]]);

describe('verifyTarball', () => {
  it('accepts the tarball the CLI builds of the declared files', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-verify-'));
    try {
      for (const [p, bytes] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
        await writeFile(path.join(dir, p), bytes);
      }
      const target = path.join(dir, 'out.tgz');
      await writeTarball(dir, Object.keys(files), target);
      expect(await verify(await readFile(target))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('accepts directory entries for the directories the declared files lie in', async () => {
    const withDirs = [
      { path: 'src/', type: 'Directory' as const },
      { path: 'src/lib', type: 'Directory' as const },
      ...honest,
    ];
    expect(await verify(tarGz(withDirs))).toEqual([]);
  });

  it.each<[string, TarEntry, string]>([
    ['a parent path', { path: '../escape.txt', body: Buffer.from('x') }, 'tarball_path'],
    ['an absolute path', { path: '/tmp/x', body: Buffer.from('x') }, 'tarball_path'],
    ['a dot segment', { path: 'src/./app.js', body: files['src/app.js'] }, 'tarball_path'],
    [
      'a symbolic link',
      { path: 'link', type: 'SymbolicLink', linkpath: '/etc' },
      'tarball_entry_type',
    ],
    ['a hard link', { path: 'hard', type: 'Link', linkpath: 'README.md' }, 'tarball_entry_type'],
    ['a character device', { path: 'tty', type: 'CharacterDevice' }, 'tarball_entry_type'],
    ['a block device', { path: 'disk', type: 'BlockDevice' }, 'tarball_entry_type'],
    ['a FIFO', { path: 'pipe', type: 'FIFO' }, 'tarball_entry_type'],
    ['a sparse file', { path: 'sparse', type: 'SparseFile' }, 'tarball_entry_type'],
    ['an undeclared file', { path: 'extra.txt', body: Buffer.from('x') }, 'tarball_unlisted'],
    ['an empty directory', { path: 'empty/', type: 'Directory' }, 'tarball_unlisted'],
    ['a set-user-ID file', { path: 'suid', body: Buffer.from('x'), mode: 0o4755 }, 'tarball_mode'],
    ['a declared file twice', { path: 'README.md', body: files['README.md'] }, 'tarball_duplicate'],
  ])('refuses %s among the declared files', async (_name, extra, code) => {
    expect(await codes(tarGz([...honest, extra]))).toEqual([[code, extra.path]]);
  });

  it('refuses a path that a pax header turns into a parent path', async () => {
    const body = Buffer.from('x');
    const pax = new Pax({ path: '../escape.txt' }).encode();
    const plain = tarBlocks([{ path: 'escape.txt', body }]);
    const tarball = gzipSync(Buffer.concat([tarBlocks(honest).subarray(0, -1024), pax, plain]));
    expect(await codes(tarball)).toEqual([['tarball_path', '../escape.txt']]);
  });

  it('refuses bytes other than the declared ones, and declared files the tarball lacks', async () => {
    const swapped = honest.map((e) =>
      e.path === 'src/app.js' ? { ...e, body: Buffer.from('console.log(2);\n') } : e,
    );
    expect(await codes(tarGz(swapped))).toEqual([['tarball_mismatch', 'src/app.js']]);
    const longer = honest.map((e) =>
      e.path === 'README.md' ? { ...e, body: Buffer.from('# Hello!\n') } : e,
    );
    expect(await codes(tarGz(longer))).toEqual([['tarball_mismatch', 'README.md']]);
    expect(await codes(tarGz(honest.slice(1)))).toEqual([['tarball_missing', 'README.md']]);
  });

  it('refuses an entry hidden after the end-of-archive blocks, and accepts zero padding', async () => {
    const hidden = tarBlocks([{ path: '../escape.txt', body: Buffer.from('x') }]);
    expect(await codes(tarGz(honest, hidden))).toEqual([['tarball_trailing', undefined]]);
    // tar pads its last record with zeros: that is no data.
    expect(await verify(tarGz(honest, Buffer.alloc(9 * 512)))).toEqual([]);
  });

  it('refuses what is not one gzipped tarball', async () => {
    expect(await codes(tarBlocks(honest))).toEqual([['tarball_unreadable', undefined]]);
    expect(await codes(gzipSync(tarGz(honest)))).toEqual([['tarball_unreadable', undefined]]);
    expect(await codes(gzipSync(Buffer.from('not a tar archive at all')))).toEqual([
      ['tarball_unreadable', undefined],
    ]);
    const truncated = tarBlocks(honest).subarray(0, 700);
    expect((await codes(gzipSync(truncated)))[0]?.[0]).toMatch(/^tarball_(unreadable|mismatch)$/);
  });

  it('stops at the declared size when the tarball inflates to more', async () => {
    // A header claiming a declared file's size, then megabytes of zeros the declaration has no
    // room for: refused for its size before the parser sees the end.
    const bomb = gzipSync(
      Buffer.concat([tarBlocks(honest).subarray(0, -1024), Buffer.alloc(8 * 1024 * 1024)]),
    );
    expect(await codes(bomb)).toEqual([['tarball_too_large', undefined]]);
  });

  it('accepts an empty archive for an empty declaration only', async () => {
    expect(await verify(tarGz([]), [])).toEqual([]);
    expect(await codes(tarGz([{ path: 'sparse', type: 'SparseFile' }]), [])).toEqual([
      ['tarball_entry_type', 'sparse'],
    ]);
    expect(await codes(tarGz([]))).toEqual(declared.map((f) => ['tarball_missing', f.path]));
  });
});
