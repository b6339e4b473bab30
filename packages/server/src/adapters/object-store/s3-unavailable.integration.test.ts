import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../../test/test-clock.js';
import { ObjectStoreUnavailable } from './object-store.js';
import { S3ObjectStore } from './s3-object-store.js';

const SHA = 'a'.repeat(64);

const storeAt = (port: number) =>
  new S3ObjectStore(
    {
      bucket: 'bundles',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
    },
    new TestClock(),
  );

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A store out of reach is the service's `503 unavailable`, never a 500: every call, and a body
 * whose connection breaks while it is read (a publish's tarball check, a download).
 */
describe('an S3 store that is not there', () => {
  let closedPort: number;
  let cut: Server;
  let cutPort: number;
  let failing: Server;
  let failingPort: number;
  beforeAll(async () => {
    // A port that was just free: nothing answers there.
    const probe = createServer();
    closedPort = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    // Answers a GET with half the promised body, then drops the connection.
    cut = createServer((req, res) => {
      res.writeHead(200, { 'content-length': '1000', 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(500, 1));
      setTimeout(() => req.socket.destroy(), 50);
    });
    cutPort = await listen(cut);
    failing = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/xml' });
      res.end('<Error><Code>ServiceUnavailable</Code><Message>down</Message></Error>');
    });
    failingPort = await listen(failing);
  });
  afterAll(async () => {
    cut?.closeAllConnections();
    failing?.closeAllConnections();
    await Promise.all([cut, failing].map((s) => new Promise((r) => s?.close(r))));
  });

  it('says so when nothing answers at its address', async () => {
    const store = storeAt(closedPort);
    await expect(store.stat(SHA)).rejects.toBeInstanceOf(ObjectStoreUnavailable);
    await expect(store.read(SHA)).rejects.toBeInstanceOf(ObjectStoreUnavailable);
    await expect(
      store.commitUpload({ uploadId: crypto.randomUUID(), sha256: SHA, size: 1 }),
    ).rejects.toBeInstanceOf(ObjectStoreUnavailable);
    await expect(store.delete(SHA)).rejects.toBeInstanceOf(ObjectStoreUnavailable);
    await store.close();
  });

  it('says so when the store answers that it is failing', async () => {
    const store = storeAt(failingPort);
    const error = await store.stat(SHA).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ObjectStoreUnavailable);
    // The store's own words stay in the cause, for the log; the message names no credential.
    expect(String(error)).not.toContain('secret');
    await store.close();
  }, 30_000);

  it('says so when a body breaks while it is read', async () => {
    const store = storeAt(cutPort);
    const body = await store.read(SHA);
    expect(body).toBeDefined();
    await expect(buffer(body!)).rejects.toBeInstanceOf(ObjectStoreUnavailable);
    await store.close();
  });
});
