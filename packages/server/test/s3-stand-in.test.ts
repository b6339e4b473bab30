import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DeleteObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3StandIn, s3StandIn } from './s3-stand-in.js';

describe('S3 stand-in', () => {
  let dir: string;
  let server: S3StandIn;
  let client: S3Client;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-s3-stand-in-'));
    server = s3StandIn({ directory: dir });
    const { port } = await server.run();
    client = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    client?.destroy();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps an object put under a prefix while the prefix’s last other key is deleted', async () => {
    const Bucket = 'bundles';
    const body = Buffer.alloc(64 * 1024, 7);
    const lost: string[] = [];
    let previous = 'uploads/first';
    await client.send(new PutObjectCommand({ Bucket, Key: previous, Body: body }));
    for (let i = 0; i < 60; i++) {
      const next = `uploads/${i}`;
      // What two publishes' uploads and commits do: one deletes its upload as the other arrives.
      await Promise.all([
        client.send(new DeleteObjectCommand({ Bucket, Key: previous })),
        client.send(new PutObjectCommand({ Bucket, Key: next, Body: body })),
      ]);
      const found = await client
        .send(new HeadObjectCommand({ Bucket, Key: next }))
        .then((head) => head.ContentLength)
        .catch(() => undefined);
      if (found !== body.length) lost.push(next);
      previous = next;
    }
    expect(lost).toEqual([]);
  });
});
