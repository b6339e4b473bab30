import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ALWAYS_EXCLUDED } from '@svc/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { walkBundle } from './walk.js';

describe('walking a home', () => {
  let home = '';
  afterEach(() => rm(home, { recursive: true, force: true }));

  const make = async (files: string[]) => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-walk-'));
    for (const file of files) {
      await mkdir(path.dirname(path.join(home, file)), { recursive: true });
      await writeFile(path.join(home, file), file);
    }
  };

  it('always excludes the fixed list, even against a negation', async () => {
    await make([
      '.ssh/id_rsa',
      '.gnupg/k',
      '.bash_history',
      '.zsh_history',
      'a/node_modules/x.js',
      '.cache/c',
      '.npm/n',
      '.crabglamp/agent.env',
      'keep.txt',
    ]);
    await writeFile(path.join(home, '.bundleignore'), '!.ssh/\n!.bash_history\n!node_modules/\n');
    const { files } = await walkBundle(home, ALWAYS_EXCLUDED);
    expect(files.map((f) => f.path)).toEqual(['.bundleignore', 'keep.txt']);
  });

  it('follows a symlink only to a kept regular file inside the home', async () => {
    await make(['docs/real.md', '.ssh/id_rsa', 'excluded/x.txt']);
    await writeFile(path.join(home, '.bundleignore'), 'excluded/\n');
    await symlink(path.join(home, 'docs/real.md'), path.join(home, 'inside.md'));
    await symlink(path.join(home, '.ssh/id_rsa'), path.join(home, 'sneaky'));
    await symlink(path.join(home, 'excluded/x.txt'), path.join(home, 'sneaky2'));
    await symlink('/etc/hostname', path.join(home, 'outside'));
    await symlink(path.join(home, 'docs'), path.join(home, 'dir-link'));
    await symlink(path.join(home, 'nowhere'), path.join(home, 'dangling'));
    const { files, skippedLinks } = await walkBundle(home, ALWAYS_EXCLUDED);
    expect(files.map((f) => f.path)).toEqual(['.bundleignore', 'docs/real.md', 'inside.md']);
    expect(files.find((f) => f.path === 'inside.md')?.source).toBe(path.join(home, 'docs/real.md'));
    expect(skippedLinks.sort()).toEqual(['dangling', 'dir-link', 'outside', 'sneaky', 'sneaky2']);
  });

  it('warns about `**` glued to other characters, where git may differ', async () => {
    await make(['a/x.txt']);
    await writeFile(path.join(home, '.bundleignore'), '# foo**\nfoo**/bar\n**/ok\na/**\n');
    await writeFile(path.join(home, 'a/.bundleignore'), 'x**\n');
    const { ignoreWarnings } = await walkBundle(home, []);
    expect(ignoreWarnings).toEqual(['.bundleignore:2: "foo**/bar"', 'a/.bundleignore:1: "x**"']);
  });

  it('is case-sensitive, as git on Linux', async () => {
    await make(['README.MD', 'readme.md']);
    await writeFile(path.join(home, '.bundleignore'), 'readme.md\n');
    const { files } = await walkBundle(home, []);
    expect(files.map((f) => f.path)).toEqual(['.bundleignore', 'README.MD']);
  });
});
