import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { signUp } from '@svc/contract';
import { Hono } from 'hono';
import { Parser } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import type { AppEnv } from './app-env.js';
import { mountDownloads, SVC_DOWNLOAD } from './downloads.js';

/** The tarball's entries: path, size and mode. */
async function entriesOf(res: Response) {
  const entries = new Map<string, { size: number; mode: number }>();
  await pipeline(
    Readable.from(Buffer.from(await res.arrayBuffer())),
    new Parser({
      onReadEntry: (entry) => {
        entries.set(entry.path.replace(/\/$/, ''), { size: entry.size, mode: entry.mode ?? 0 });
        entry.resume();
      },
    }),
  );
  return entries;
}

// What a cloud Agent's first boot fetches: Node and the one-file svc (`npm run build:cli`, which
// `npm run build` and CI run first; without it this fails, as the service would answer 404).

describe('GET /downloads/svc-<platform>-<arch>.tar.gz', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('pglite');
  });
  afterAll(() => t?.close());

  it('serves Node and svc as one tarball, the same one again by its ETag', async () => {
    const res = await t.app.request(SVC_DOWNLOAD);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    const entries = await entriesOf(res);
    // Node itself (tens of MB, executable), not a link to this host's copy.
    const node = entries.get('bin/node');
    expect(node?.size).toBeGreaterThan(10_000_000);
    expect((node?.mode ?? 0) & 0o111).not.toBe(0);
    expect(entries.get('svc.mjs')?.size).toBeGreaterThan(0);

    const tag = res.headers.get('etag') as string;
    expect(tag).toMatch(/^"[0-9a-f]{32}-v\d+/);
    const again = await t.app.request(SVC_DOWNLOAD, { headers: { 'if-none-match': tag } });
    expect(again.status).toBe(304);
  });

  it('is readable by all on the machine even when the service built svc under its umask 077', async () => {
    // What a build made by the service itself looks like: files 0600/0700, directories 0700.
    const work = await mkdtemp(path.join(tmpdir(), 'svc-downloads-'));
    try {
      const build = path.join(work, 'dist');
      await mkdir(path.join(build, 'chunks'), { recursive: true });
      await writeFile(path.join(build, 'svc.mjs'), 'export {};\n');
      await writeFile(path.join(build, 'chunks', 'a.mjs'), 'export {};\n');
      await chmod(path.join(build, 'svc.mjs'), 0o600);
      await chmod(path.join(build, 'chunks', 'a.mjs'), 0o600);
      await chmod(path.join(build, 'chunks'), 0o700);
      const app = new Hono<AppEnv>();
      mountDownloads(app, { cliBuildDir: build, dataDir: path.join(work, 'data') });
      const res = await app.request(SVC_DOWNLOAD);
      expect(res.status).toBe(200);
      const modes = Object.fromEntries(
        [...(await entriesOf(res))].map(([file, { mode }]) => [file, mode & 0o7777]),
      );
      expect(modes).toEqual({
        bin: 0o755,
        'bin/node': 0o755,
        chunks: 0o755,
        'chunks/a.mjs': 0o644,
        'svc.mjs': 0o644,
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('is a reserved word, never an account', async () => {
    const res = await t.client.call(signUp, {
      body: {
        email: 'downloads@example.com',
        password: 'correct horse battery',
        name: 'Downloads',
      },
    });
    expect(res.body.account.slug).not.toBe('downloads');
  });
});
