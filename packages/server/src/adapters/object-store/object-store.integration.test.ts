import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3StandIn } from '../../../test/s3-stand-in.js';
import { TestClock } from '../../../test/test-clock.js';
import type { AppEnv } from '../../http/app-env.js';
import { FsObjectStore } from './fs-object-store.js';
import { mountFsUploads } from './fs-upload-route.js';
import type { ObjectStore, UploadTicket } from './object-store.js';
import { S3ObjectStore } from './s3-object-store.js';

interface Driver {
  readonly store: ObjectStore;
  readonly clock: TestClock;
  close(): Promise<void>;
}

async function listen(app: Hono<AppEnv>) {
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

const drivers: Record<'fs' | 's3', () => Promise<Driver>> = {
  async fs() {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-objects-'));
    const clock = new TestClock();
    const app = new Hono<AppEnv>();
    app.onError((error, c) =>
      c.json(
        { error: (error as { code?: string }).code },
        (error as { status?: number }).status as 400,
      ),
    );
    const server = await listen(app);
    const store = new FsObjectStore(dir, server.url, Buffer.alloc(32, 7), clock);
    mountFsUploads(app, store);
    return {
      store,
      clock,
      close: async () => {
        await server.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  async s3() {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-s3rver-'));
    const s3rver = s3StandIn({ directory: dir });
    const { port } = await s3rver.run();
    const clock = new TestClock();
    const store = new S3ObjectStore(
      {
        bucket: 'bundles',
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      },
      clock,
    );
    return {
      store,
      clock,
      close: async () => {
        await store.close();
        await s3rver.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** One contract, both drivers: the bundle service relies on exactly these behaviours. */
describe.each(Object.keys(drivers) as ('fs' | 's3')[])('object store contract: %s', (kind) => {
  let d: Driver;
  beforeAll(async () => {
    d = await drivers[kind]();
  });
  afterAll(() => d?.close());

  const ticket = (bytes: Buffer, ttlMs = 60_000): UploadTicket => ({
    uploadId: randomUUID(),
    sha256: sha256(bytes),
    size: bytes.length,
    expiresAt: new Date(d.clock.now().getTime() + ttlMs),
  });
  const put = async (t: UploadTicket, body: Buffer) => {
    const target = await d.store.uploadUrl(t);
    const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body });
    await res.arrayBuffer();
    return res.status;
  };

  it('stores uploaded bytes under their hash after commit, and reads them back', async () => {
    const bytes = randomBytes(100_000);
    const t = ticket(bytes);
    expect(await put(t, bytes)).toBe(200);
    expect(await d.store.commitUpload(t)).toBe('stored');
    expect(await d.store.stat(t.sha256)).toEqual({ size: bytes.length });
    const read = await d.store.read(t.sha256);
    expect(Buffer.compare(await buffer(read!), bytes)).toBe(0);
  });

  it('stores an empty object', async () => {
    const bytes = Buffer.alloc(0);
    const t = ticket(bytes);
    expect(await put(t, bytes)).toBe(200);
    expect(await d.store.commitUpload(t)).toBe('stored');
    expect(await d.store.stat(t.sha256)).toEqual({ size: 0 });
  });

  it('reports an upload that never came as missing, and an unknown object as absent', async () => {
    const t = ticket(randomBytes(10));
    expect(await d.store.commitUpload(t)).toBe('missing');
    expect(await d.store.stat(t.sha256)).toBeUndefined();
    expect(await d.store.read(t.sha256)).toBeUndefined();
  });

  it('never turns bytes other than the declared ones into an object', async () => {
    const declared = randomBytes(1000);
    const other = randomBytes(1000);
    const t = ticket(declared);
    const status = await put(t, other);
    // fs refuses at once; S3 accepts the PUT and the commit's hash check refuses.
    if (status === 200) expect(await d.store.commitUpload(t)).toBe('mismatch');
    else expect(status).toBe(400);
    expect(await d.store.stat(t.sha256)).toBeUndefined();
    expect(await d.store.commitUpload(t)).toBe('missing');
  });

  it('refuses a body longer or shorter than the signed size', async () => {
    const bytes = randomBytes(500);
    const t = ticket(bytes);
    const longer = await put(t, Buffer.concat([bytes, Buffer.from('x')]));
    const shorter = await put(t, bytes.subarray(0, 499));
    for (const status of [longer, shorter]) expect(status).toBeGreaterThanOrEqual(400);
    expect(await d.store.stat(t.sha256)).toBeUndefined();
  });

  it('refuses an expired upload URL', async () => {
    const bytes = randomBytes(100);
    const t = ticket(bytes, -5_000);
    expect(await put(t, bytes)).toBe(403);
    expect(await d.store.commitUpload(t)).toBe('missing');
  });

  it('refuses a tampered upload URL', async () => {
    const bytes = randomBytes(100);
    const t = ticket(bytes);
    const target = await d.store.uploadUrl(t);
    const url = new URL(target.url);
    const sig = url.searchParams.has('sig') ? 'sig' : 'X-Amz-Signature';
    url.searchParams.set(sig, `${url.searchParams.get(sig)?.slice(0, -2)}AA`);
    const res = await fetch(url, { method: 'PUT', headers: target.headers, body: bytes });
    expect(res.status).toBe(403);
    expect(await d.store.commitUpload(t)).toBe('missing');
  });

  it('never overwrites an existing object, and deletes idempotently', async () => {
    const bytes = randomBytes(300);
    const first = ticket(bytes);
    expect(await put(first, bytes)).toBe(200);
    expect(await d.store.commitUpload(first)).toBe('stored');
    // A second upload of the same content is harmless: same name, same bytes.
    const again = ticket(bytes);
    expect(await put(again, bytes)).toBe(200);
    expect(await d.store.commitUpload(again)).toBe('stored');
    expect(Buffer.compare(await buffer((await d.store.read(first.sha256))!), bytes)).toBe(0);
    await d.store.delete(first.sha256);
    await d.store.delete(first.sha256);
    expect(await d.store.stat(first.sha256)).toBeUndefined();
  });
});
