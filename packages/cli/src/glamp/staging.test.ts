import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BundleManifest } from '@svc/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { GZIP_BLOCK_BYTES } from './parallel-gzip.js';
import {
  buildStagingTarball,
  buildStagingTree,
  finishStagingTarball,
  TARBALL_FILE,
} from './staging.js';
import type { TarballWriter } from './tarball.js';

const MANIFEST: BundleManifest = {
  name: 'staged',
  displayName: 'Staged',
  description: 'A staged home.',
  tags: [],
  glampId: '',
  credentials: [],
};

describe('stage packs the tarball while it builds the tree', () => {
  let home = '';
  afterEach(() => rm(home, { recursive: true, force: true }));

  async function stage() {
    const tree = await buildStagingTree(home, undefined, { manifest: MANIFEST, tarball: true });
    const tarball = await finishStagingTarball(tree.tarball as TarballWriter, tree.files);
    return { tree, tarball, bytes: await readFile(path.join(home, TARBALL_FILE)) };
  }

  it('gives the bytes a tarball of the finished tree has, the same on every stage', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-stage-'));
    await mkdir(path.join(home, '.openclaw'));
    await writeFile(path.join(home, '.openclaw/.env'), 'OPENAI_API_KEY=sk-proj-abcdefghij0123\n');
    await writeFile(path.join(home, 'empty.txt'), '');
    await writeFile(path.join(home, 'big.txt'), 'line of text\n'.repeat(GZIP_BLOCK_BYTES / 4));
    await writeFile(path.join(home, 'zz.md'), '# last\n');
    const first = await stage();
    const second = await stage();
    expect(second.bytes.equals(first.bytes)).toBe(true);
    // The staged bundle.json (not in the home) lists the credential stripped before it.
    const staged = JSON.parse(
      await readFile(path.join(home, '.crabglamp/glamp-staging/bundle.json'), 'utf8'),
    );
    expect(staged.credentials.map((c: { key: string }) => c.key)).toEqual(['OPENAI_API_KEY']);
    // What confirm packs again from the staging tree is the same tarball.
    const again = await buildStagingTarball(home, first.tree.files);
    expect(again).toEqual(first.tarball);
    const listed = execFileSync('tar', ['tzf', path.join(home, TARBALL_FILE)], {
      encoding: 'utf8',
    });
    expect(listed.split('\n').filter(Boolean)).toEqual(first.tree.files.map((f) => f.path));
    expect(listed).toContain('bundle.json');
    // A changed file changes the tarball: the comparison can fail.
    await writeFile(path.join(home, 'zz.md'), '# changed\n');
    expect((await stage()).bytes.equals(first.bytes)).toBe(false);
  });
});
