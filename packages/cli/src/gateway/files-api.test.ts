import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HomeFiles, MAX_EDIT_BYTES } from './files-api.js';

describe("the editor's view of the home directory", () => {
  let root: string;
  let home: string;
  let files: HomeFiles;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'svc-files-'));
    home = path.join(root, 'home');
    await mkdir(path.join(home, 'src'), { recursive: true });
    await writeFile(path.join(home, 'src/app.ts'), 'export {};\n');
    await writeFile(path.join(root, 'secret.txt'), 'outside');
    await symlink(path.join(root, 'secret.txt'), path.join(home, 'escape.txt'));
    await symlink(path.join(home, 'src/app.ts'), path.join(home, 'inside.ts'));
    files = new HomeFiles(home);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('lists directories first and reads and writes files in the home', async () => {
    expect(await files.list('')).toEqual([
      { name: 'src', kind: 'dir' },
      { name: 'escape.txt', kind: 'file' },
      { name: 'inside.ts', kind: 'file' },
    ]);
    expect(await files.read('src/app.ts')).toBe('export {};\n');
    await files.write('src/new.md', '# new');
    expect(await readFile(path.join(home, 'src/new.md'), 'utf8')).toBe('# new');
    await files.write('inside.ts', 'export const a = 1;\n');
    expect(await readFile(path.join(home, 'src/app.ts'), 'utf8')).toBe('export const a = 1;\n');
  });

  it.each([
    ['a parent path', () => files.read('../secret.txt'), 403],
    ['a symlink out of the home', () => files.read('escape.txt'), 403],
    ['writing through a symlink out of the home', () => files.write('escape.txt', 'x'), 403],
    ['writing into a missing directory', () => files.write('nope/file.txt', 'x'), 404],
    ['a missing file', () => files.read('missing.txt'), 404],
    ['a directory as a file', () => files.read('src'), 400],
    ['too much content', () => files.write('big.txt', 'x'.repeat(MAX_EDIT_BYTES + 1)), 413],
  ])('refuses %s', async (_, call, status) => {
    await expect(call()).rejects.toMatchObject({ status });
    expect(await readFile(path.join(root, 'secret.txt'), 'utf8')).toBe('outside');
  });
});
