import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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

  it('creates, renames and removes files in the home', async () => {
    await files.create('src/made.ts');
    expect(await readFile(path.join(home, 'src/made.ts'), 'utf8')).toBe('');
    await files.rename('src/made.ts', 'moved.ts');
    expect(await readFile(path.join(home, 'moved.ts'), 'utf8')).toBe('');
    await expect(lstat(path.join(home, 'src/made.ts'))).rejects.toThrow();
    await files.remove('moved.ts');
    await expect(lstat(path.join(home, 'moved.ts'))).rejects.toThrow();
  });

  it('renames and removes a link as a link, leaving what it points to', async () => {
    await symlink(path.join(root, 'secret.txt'), path.join(home, 'out-link'));
    await files.rename('out-link', 'src/out-link');
    await files.remove('src/out-link');
    await expect(lstat(path.join(home, 'src/out-link'))).rejects.toThrow();
    expect(await readFile(path.join(root, 'secret.txt'), 'utf8')).toBe('outside');
  });

  it.each([
    ['creating over an existing file', () => files.create('src/app.ts'), 409],
    ['renaming over an existing file', () => files.rename('inside.ts', 'src/app.ts'), 409],
    ['renaming a directory into itself', () => files.rename('src', 'src/deeper'), 400],
    ['removing a directory', () => files.remove('src'), 400],
    ['removing a missing file', () => files.remove('missing.txt'), 404],
    ['renaming a missing file', () => files.rename('missing.txt', 'b.txt'), 404],
    ['creating a file named ..', () => files.create('src/..'), 400],
  ])('refuses %s', async (_, call, status) => {
    await expect(call()).rejects.toMatchObject({ status });
  });

  // Every way out of the home a path could take: a parent path, an absolute-looking path that
  // climbs, a directory link that leads out. Nothing outside changes, nothing appears there.
  it.each([
    ['creating in a parent', () => files.create('../made.txt'), 403],
    ['creating through a climbing path', () => files.create('src/../../made.txt'), 403],
    ['creating through a directory link out', () => files.create('out-dir/made.txt'), 403],
    ['renaming out of the home', () => files.rename('src/app.ts', '../moved.ts'), 403],
    ['renaming from outside into the home', () => files.rename('../secret.txt', 'in.txt'), 403],
    ['renaming through a directory link out', () => files.rename('out-dir/x.txt', 'x.txt'), 403],
    ['renaming into a directory link out', () => files.rename('inside.ts', 'out-dir/x.ts'), 403],
    ['removing in a parent', () => files.remove('../secret.txt'), 403],
    ['removing through a climbing path', () => files.remove('/src/../../secret.txt'), 403],
    ['removing through a directory link out', () => files.remove('out-dir/x.txt'), 403],
  ])('refuses %s', async (_, call, status) => {
    await mkdir(path.join(root, 'elsewhere'), { recursive: true });
    await writeFile(path.join(root, 'elsewhere/x.txt'), 'theirs');
    await symlink(path.join(root, 'elsewhere'), path.join(home, 'out-dir')).catch(() => {});
    await expect(call()).rejects.toMatchObject({ status });
    expect(await readFile(path.join(root, 'secret.txt'), 'utf8')).toBe('outside');
    expect(await readFile(path.join(root, 'elsewhere/x.txt'), 'utf8')).toBe('theirs');
    expect((await readdir(root)).sort()).toEqual(['elsewhere', 'home', 'secret.txt']);
    expect(await readdir(path.join(root, 'elsewhere'))).toEqual(['x.txt']);
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
