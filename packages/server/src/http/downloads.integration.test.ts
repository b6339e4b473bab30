import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { SVC_DOWNLOAD } from './downloads.js';

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
    const entries = new Map<string, { size: number; mode: number }>();
    await pipeline(
      Readable.from(Buffer.from(await res.arrayBuffer())),
      new Parser({
        onReadEntry: (entry) => {
          entries.set(entry.path, { size: entry.size, mode: entry.mode ?? 0 });
          entry.resume();
        },
      }),
    );
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

  it('is a reserved word, never an account', async () => {
    const res = await t.client.post('/api/auth/sign-up', {
      email: 'downloads@example.com',
      password: 'correct horse battery',
      name: 'Downloads',
    });
    expect(res.status).toBe(201);
    expect(res.body.account.slug).not.toBe('downloads');
  });
});
