import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deleteBundle } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  agentClient,
  completeRefused,
  completeVersion,
  manifestOf,
  sha256,
  stageAndPublish,
  tarballOf,
} from '../../test/bundle-test-helpers.js';
import { type S3StandIn, s3StandIn } from '../../test/s3-stand-in.js';
import type { TestClient } from '../../test/test-client.js';
import { TestClock } from '../../test/test-clock.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { S3ObjectStore } from '../adapters/object-store/s3-object-store.js';

const onS3Files = { 'README.md': Buffer.from('# From S3\n'), 'a.txt': Buffer.from('a') };

/** Uploads go over the network to the S3 stand-in, as an Agent's would. */
const put = async (upload: { url: string; headers: Record<string, string> }, bytes: Buffer) => {
  const res = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
  await res.arrayBuffer();
  return res.status;
};

describe.each(databaseKinds)('Bundles on the s3 object store, %s', (kind) => {
  let t: TestContext;
  let s3rver: S3StandIn;
  let dir: string;
  let owner: TestClient;
  let slug: string;
  let agent: AgentClient;
  let store: S3ObjectStore;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-s3-bundles-'));
    s3rver = s3StandIn({ directory: dir });
    const { port } = await s3rver.run();
    store = new S3ObjectStore(
      {
        bucket: 'bundles',
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      },
      new TestClock(),
    );
    t = await createTestContext(kind, { overrides: { objectStore: store } });
    owner = t.newClient();
    slug = (await signUpUser(owner)).account.slug;
    agent = await agentClient(t, owner);
  });
  afterAll(async () => {
    await t?.close();
    await s3rver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes through presigned URLs; the page and the tarball come from S3', async () => {
    const tarball = tarballOf(onS3Files);
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('on-s3'),
      files: onS3Files,
      tarball,
      put,
    });
    expect(run.uploads[0]?.url).toContain('X-Amz-Signature');
    expect(run.statuses).toEqual([200, 200, 200]);
    expect((await completeVersion(agent, run.bundleId, run.stagingId)).body.version).toBe(1);
    expect((await t.newClient().get(`/${slug}/on-s3`)).body).toContain('<h1>From S3</h1>');
    const download = await t.app.request(`/${slug}/on-s3/versions/1/download`);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(tarball);
    // The uploads were moved to their hash's name.
    expect(await store.stat(sha256(tarball))).toEqual({ size: tarball.length });
  });

  it('refuses bytes other than the declared ones at complete: 400 and no version', async () => {
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('bad-s3'),
      files: { 'b.txt': Buffer.from('b') },
      tarball: Buffer.from('bad tarball'),
      replace: (sha) => (sha === sha256('b') ? Buffer.from('c') : undefined),
      put,
    });
    // S3 cannot check the hash at upload time; complete does.
    expect(run.statuses).toEqual([200, 200]);
    const res = await completeRefused(agent, run.bundleId, run.stagingId);
    expect(res).toMatchObject({
      status: 400,
      body: { error: 'upload_invalid', issues: [{ path: ['b.txt'], code: 'upload_mismatch' }] },
    });
    expect(await store.stat(sha256('b'))).toBeUndefined();
    expect(await store.stat(sha256('c'))).toBeUndefined();
  });

  it('deletes the objects of a deleted bundle from S3', async () => {
    expect(
      (await owner.call(deleteBundle, { params: { accountSlug: slug, name: 'on-s3' } })).status,
    ).toBe(204);
    expect(await store.stat(sha256(tarballOf(onS3Files)))).toBeUndefined();
  });
});
