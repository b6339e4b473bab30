import {
  bundlePage,
  cancelStaging,
  completePublish,
  createOrg,
  createStaging,
  deleteBundle,
  deleteBundleVersion,
  getBundle,
  getGlampStatus,
  healthz,
  listAccountBundles,
  openapi,
  publishBundle,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  agentClient,
  completeRefused,
  completeVersion,
  manifestOf,
  putObject,
  reportOf,
  sha256,
  stageAndPublish,
  tarballOf,
  tarGz,
} from '../../test/bundle-test-helpers.js';
import { joinOrganization } from '../../test/mailed-links.js';
import { metricValue } from '../../test/metric-value.js';
import { errorOf, type TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { sweepUploads } from './bundles.jobs.js';

const files = (tag: string) => ({
  'README.md': Buffer.from(`# Hello ${tag}\n\nSome *text*.\n`),
  'src/app.js': Buffer.from(`console.log(${JSON.stringify(tag)});\n`),
  'shared.txt': Buffer.from('the same in every version\n'),
});

describe.each(databaseKinds)('Bundles publish on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let slug: string;
  let accountId: string;
  let agent: AgentClient;
  beforeAll(async () => {
    t = await createTestContext(kind);
    owner = t.newClient();
    ({ slug, id: accountId } = (await signUpUser(owner)).account);
    agent = await agentClient(t, owner);
  });
  afterAll(() => t?.close());

  const versionCount = async (bundleId: string) =>
    (
      await t.ctx.database.db
        .selectFrom('bundleVersions')
        .select('id')
        .where('bundleId', '=', bundleId)
        .execute()
    ).length;

  it('publishes version 1, then version 2, and version 1 stays byte-identical', async () => {
    const v1Files = files('one');
    const v1Tar = tarballOf(v1Files);
    const first = await stageAndPublish(t, agent, {
      manifest: manifestOf('first-bundle'),
      files: v1Files,
      tarball: v1Tar,
    });
    expect(first.statuses.every((s) => s === 200)).toBe(true);
    expect(await completeVersion(agent, first.bundleId, first.stagingId)).toMatchObject({
      body: {
        bundleId: first.bundleId,
        version: 1,
        url: `http://localhost:8080/${slug}/first-bundle`,
      },
    });
    // Logged once at info, by its ids.
    const published = t.logs
      .entries()
      .filter((entry) => entry.msg === 'bundle published' && entry.bundleId === first.bundleId);
    expect(published).toEqual([
      expect.objectContaining({ level: 30, version: 1, durationMs: expect.any(Number) }),
    ]);
    const manifest2 = manifestOf('first-bundle', {
      glampId: first.bundleId,
      displayName: 'Second',
    });
    const second = await stageAndPublish(t, agent, {
      manifest: manifest2,
      files: files('two'),
    });
    // The unchanged file is stored already: no upload asked for it.
    expect(second.uploads.map((u) => u.sha256)).not.toContain(sha256(v1Files['shared.txt']));
    expect((await completeVersion(agent, first.bundleId, second.stagingId)).body.version).toBe(2);

    const detail = await owner.call(getBundle, {
      params: { accountSlug: slug, name: 'first-bundle' },
    });
    expect(detail.body).toMatchObject({ displayName: 'Second', latestVersion: 2 });
    expect(detail.body.versions.map((v) => v.version)).toEqual([2, 1]);

    const page = await t.newClient().get(`/${slug}/first-bundle`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Hello two</h1>');
    expect(page.body).toContain('src/app.js');
    const old = await t.newClient().get(`/${slug}/first-bundle/versions/1`);
    expect(old.body).toContain('<h1>Hello one</h1>');
    // "Adopt this bundle" opens the dashboard's form, for this version when it is not the latest.
    const adoptHref = (html: string) =>
      /<a class="adopt" href="([^"]*)">Adopt this bundle</.exec(html)?.[1];
    expect(adoptHref(String(page.body))).toBe(`/dashboard/adopt/${slug}/first-bundle`);
    expect(adoptHref(String(old.body))).toBe(`/dashboard/adopt/${slug}/first-bundle?version=1`);
    const latest = await t.newClient().get(`/${slug}/first-bundle/versions/2`);
    expect(adoptHref(String(latest.body))).toBe(`/dashboard/adopt/${slug}/first-bundle`);
    const raw = await t.app.request(`/${slug}/first-bundle/versions/1/files/src/app.js?raw=1`);
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(v1Files['src/app.js']);
    const tar = await t.app.request(`/${slug}/first-bundle/versions/1/download`);
    expect(tar.headers.get('content-disposition')).toContain('first-bundle-v1.tar.gz');
    expect(Buffer.from(await tar.arrayBuffer())).toEqual(v1Tar);
    const filePage = await t.newClient().get(`/${slug}/first-bundle/versions/1/files/src/app.js`);
    expect(filePage.body).toContain('console.log(&#34;one&#34;);');
    const folder = await t.newClient().get(`/${slug}/first-bundle/versions/1/files/src`);
    expect(folder.status).toBe(200);
    expect(folder.body).toContain(`href="/${slug}/first-bundle/versions/1/files/src/app.js"`);
  });

  it('answers 404 for anything that is not a bundle, and never shadows the service routes', async () => {
    for (const path of [
      `/${slug}/nope`,
      '/nobody-here/first-bundle',
      `/${slug}/first-bundle/versions/9`,
      `/${slug}/first-bundle/versions/x`,
      `/${slug}/first-bundle/versions/1/files/missing.txt`,
      `/${slug}/first-bundle/versions/1/download/extra`,
    ]) {
      expect((await t.newClient().get(path)).status, path).toBe(404);
    }
    const api404 = await t
      .newClient()
      .callError(bundlePage, { params: { accountSlug: 'api', name: 'nothing' } });
    expect(api404).toMatchObject({ status: 404, body: { error: 'not_found' } });
    // The dashboard's paths belong to the dashboard, never to a bundle page.
    const dashboard = await t.newClient().get('/dashboard/agents');
    expect(dashboard.headers.get('content-type')).toMatch(/^text\/html/);
    expect(String(dashboard.body)).toMatch(/dashboard/i);
    expect((await t.newClient().call(healthz)).status).toBe(200);
    expect((await t.newClient().call(openapi)).status).toBe(200);
    expect(
      (await owner.callError(getBundle, { params: { accountSlug: slug, name: 'nope' } })).status,
    ).toBe(404);
  });

  it('gives 400 and no version for a wrong hash or a missing object', async () => {
    const fileSet = { 'a.txt': Buffer.from('a'), 'b.txt': Buffer.from('b') };
    const tarball = tarballOf(fileSet);
    const published = () => metricValue(t.ctx.metrics.registry, 'svc_bundle_publishes_total');
    const publishedBefore = await published();
    const wrong = await stageAndPublish(t, agent, {
      manifest: manifestOf('wrong-hash'),
      files: fileSet,
      tarball,
      replace: (sha) => (sha === sha256('a') ? Buffer.from('x') : undefined),
    });
    expect(wrong.statuses).toContain(400);
    const res = await completeRefused(agent, wrong.bundleId, wrong.stagingId);
    expect(res).toMatchObject({
      status: 400,
      body: { error: 'upload_invalid', issues: [{ path: ['a.txt'], code: 'missing_upload' }] },
    });
    const neverSent = Buffer.from('tar never sent');
    const missing = await stageAndPublish(t, agent, {
      manifest: manifestOf('wrong-hash'),
      files: fileSet,
      tarball: neverSent,
      skip: (sha) => sha === sha256(neverSent),
    });
    expect((await completeRefused(agent, missing.bundleId, missing.stagingId)).body).toMatchObject({
      error: 'upload_invalid',
      issues: [{ path: ['tarball'] }],
    });
    expect(await versionCount(wrong.bundleId)).toBe(0);
    expect(await published()).toBe(publishedBefore);
    // Abandoned attempts leave no gap: the first successful complete is version 1.
    const good = await stageAndPublish(t, agent, {
      manifest: manifestOf('wrong-hash'),
      files: fileSet,
      tarball,
    });
    expect((await completeVersion(agent, good.bundleId, good.stagingId)).body.version).toBe(1);
    expect(await published()).toBe(publishedBefore + 1);
  });

  it('refuses a tarball that is not the declared files: 400, no version, nothing served', async () => {
    const fileSet = { 'README.md': Buffer.from('# Escape\n'), 'a.txt': Buffer.from('a') };
    const honest = Object.entries(fileSet).map(([path, body]) => ({ path, body }));
    const hostile = tarGz([
      ...honest,
      { path: '../escape.txt', body: Buffer.from('out of the tree') },
      { path: '/tmp/x', body: Buffer.from('absolute') },
      { path: 'link', type: 'SymbolicLink', linkpath: '/etc' },
    ]);
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('escape'),
      files: fileSet,
      tarball: hostile,
    });
    expect(run.statuses.every((s) => s === 200)).toBe(true);
    expect(await completeRefused(agent, run.bundleId, run.stagingId)).toMatchObject({
      status: 400,
      body: {
        error: 'upload_invalid',
        issues: [{ path: ['tarball', '../escape.txt'], code: 'tarball_path' }],
      },
    });
    const linked = await stageAndPublish(t, agent, {
      manifest: manifestOf('escape'),
      files: fileSet,
      tarball: tarGz([...honest, { path: 'link', type: 'SymbolicLink', linkpath: '/etc' }]),
    });
    expect((await completeRefused(agent, linked.bundleId, linked.stagingId)).body).toMatchObject({
      error: 'upload_invalid',
      issues: [{ path: ['tarball', 'link'], code: 'tarball_entry_type' }],
    });
    // Declared files the tarball does not hold are as wrong as extra ones.
    const short = await stageAndPublish(t, agent, {
      manifest: manifestOf('escape'),
      files: fileSet,
      tarball: tarGz(honest.slice(0, 1)),
    });
    expect((await completeRefused(agent, short.bundleId, short.stagingId)).body).toMatchObject({
      error: 'upload_invalid',
      issues: [{ path: ['tarball', 'a.txt'], code: 'tarball_missing' }],
    });
    expect(await versionCount(run.bundleId)).toBe(0);
    expect((await t.newClient().get(`/${slug}/escape`)).status).toBe(404);
    // The honest tarball of the same files publishes, as version 1.
    const good = await stageAndPublish(t, agent, {
      manifest: manifestOf('escape'),
      files: fileSet,
    });
    expect((await completeVersion(agent, good.bundleId, good.stagingId)).body.version).toBe(1);
  });

  it('refuses a publish declaring a file over the size limit, or files over the total, with 400', async () => {
    const report = reportOf({ 'small.txt': Buffer.from('small') });
    const staged = await agent.call(createStaging, {
      body: {
        manifest: manifestOf('too-big'),
        report,
      },
    });
    expect(staged.status).toBe(201);
    const declared = (files: { path: string; size: number; sha256: string }[]) => ({
      params: { slug: 'new' },
      body: {
        stagingId: staged.body.id,
        manifest: manifestOf('too-big'),
        files,
        tarball: report.tarball,
      },
    });
    const declare = (files: { path: string; size: number; sha256: string }[]) =>
      agent.callError(publishBundle, declared(files));
    const { maxFileBytes, maxTotalBytes } = t.ctx.config.bundles;
    // One 50 GB "file", as one Agent declared it.
    const huge = await declare([{ path: 'huge.bin', size: 50e9, sha256: sha256('huge') }]);
    expect(huge).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', issues: [{ path: ['body', 'files', 0, 'size'] }] },
    });
    expect(huge.body.issues?.[0]?.message).toContain(String(maxFileBytes));
    const count = Math.floor(maxTotalBytes / maxFileBytes) + 1;
    const many = await declare(
      Array.from({ length: count }, (_, i) => ({
        path: `part-${i}.bin`,
        size: maxFileBytes,
        sha256: sha256(`part-${i}`),
      })),
    );
    expect(many).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', issues: [{ path: ['body', 'files'] }] },
    });
    expect(many.body.issues?.[0]?.message).toContain(String(maxTotalBytes));
    // The staging report is held to the same limits.
    const stagedHuge = await agent.callError(createStaging, {
      body: {
        manifest: manifestOf('too-big'),
        report: { ...report, files: [{ path: 'huge.bin', size: 50e9, sha256: sha256('huge') }] },
      },
    });
    expect(stagedHuge.body.issues?.[0]?.path).toEqual(['body', 'report', 'files', 0, 'size']);
    // Right at the limit is allowed.
    const atLimit = await agent.call(
      publishBundle,
      declared([{ path: 'max.bin', size: maxFileBytes, sha256: sha256('m') }]),
    );
    expect(atLimit.status).toBe(200);
  });

  it('refuses expired and tampered upload URLs', async () => {
    const bytes = Buffer.from('expiring');
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('expiry'),
      files: { 'e.txt': bytes },
      tarball: Buffer.from('t-exp'),
      skip: () => true,
    });
    const upload = run.uploads.find((u) => u.sha256 === sha256(bytes));
    if (!upload) throw new Error('no upload asked for e.txt');
    expect(
      await putObject(t, { ...upload, url: upload.url.replace(/sig=[^&]+/, 'sig=AAAA') }, bytes),
    ).toBe(403);
    expect(
      await putObject(t, { ...upload, url: upload.url.replace(/size=\d+/, 'size=9') }, bytes),
    ).toBe(403);
    t.clock.advance(2 * 60 * 60 * 1000);
    expect(await putObject(t, upload, bytes)).toBe(403);
    expect((await completeRefused(agent, run.bundleId, run.stagingId)).status).toBe(400);
  });

  it('refuses completes for a cancelled staging, a foreign or deleted bundle, and invalid manifests', async () => {
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('cancelled'),
      files: { 'c.txt': Buffer.from('c') },
      tarball: Buffer.from('t-c'),
    });
    expect((await agent.call(cancelStaging, { params: { id: run.stagingId } })).status).toBe(204);
    expect(await completeRefused(agent, run.bundleId, run.stagingId)).toMatchObject({
      status: 409,
      body: { error: 'invalid_state', detail: 'cannot complete a staging that is cancelled' },
    });
    expect(await agent.callError(cancelStaging, { params: { id: run.stagingId } })).toMatchObject({
      status: 409,
      body: { error: 'invalid_state', detail: 'cannot cancel a staging that is cancelled' },
    });
    expect(await versionCount(run.bundleId)).toBe(0);

    // Another account's Agent cannot publish to or complete this account's bundle.
    const stranger = t.newClient();
    await signUpUser(stranger);
    const foreign = await agentClient(t, stranger);
    const report = reportOf({ 'f.txt': Buffer.from('f') }, Buffer.from('t-f'));
    const staged = await foreign.call(createStaging, {
      body: {
        manifest: manifestOf('cancelled'),
        report,
      },
    });
    const body = {
      stagingId: staged.body.id,
      manifest: manifestOf('cancelled'),
      files: report.files,
      tarball: report.tarball,
    };
    expect(
      (await foreign.callError(publishBundle, { params: { slug: run.bundleId }, body })).status,
    ).toBe(404);
    expect(
      (
        await foreign.callError(completePublish, {
          params: { slug: run.bundleId },
          body: {
            stagingId: run.stagingId,
          },
        })
      ).status,
    ).toBe(404);

    // A raw path: the manifest carries a field the contract's types do not have.
    const bad = await agent.post('/api/glamps/stagings', {
      manifest: {
        name: 'Not Kebab',
        displayName: '',
        description: 'x',
        tags: ['Bad Tag'],
        glampId: 'nope',
        credentials: [],
        license: 'MIT',
      },
      report,
    });
    expect(bad.status).toBe(400);
    const paths = errorOf(bad).issues?.map((i) => i.path.slice(1).join('.'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'manifest.name',
        'manifest.displayName',
        'manifest.tags.0',
        'manifest.glampId',
        'manifest',
      ]),
    );
    const long = await agent.callError(createStaging, {
      body: {
        manifest: manifestOf('a'.repeat(51)),
        report,
      },
    });
    expect(long.body.issues?.[0]).toMatchObject({
      path: ['body', 'manifest', 'name'],
      message: 'Use at most 50 characters',
    });
    const tooBig = await agent.callError(publishBundle, {
      params: { slug: 'new' },
      body: {
        ...body,
        stagingId: staged.body.id,
        tarball: { size: 500_000_001, sha256: sha256('x') },
      },
    });
    expect(tooBig.body.issues?.[0]?.message).toMatch(/500 MB/);
    expect(
      (await agent.call(createStaging, { body: { manifest: manifestOf('x'), report } })).status,
    ).toBe(201);
    expect(
      (
        await t
          .newClient()
          .callError(
            createStaging,
            { body: { manifest: manifestOf('x'), report } },
            { origin: null },
          )
      ).status,
    ).toBe(401);
  });

  it('numbers 10 concurrent completes of one bundle 1 to 10, distinct and increasing', async () => {
    const seed = await stageAndPublish(t, agent, {
      manifest: manifestOf('busy'),
      files: { 'x.txt': Buffer.from('x0') },
    });
    const first = await completeVersion(agent, seed.bundleId, seed.stagingId);
    const agents = await Promise.all(Array.from({ length: 10 }, () => agentClient(t, owner)));
    const runs = [];
    for (const [i, a] of agents.entries()) {
      runs.push(
        await stageAndPublish(t, a, {
          manifest: manifestOf('busy', { glampId: seed.bundleId }),
          files: { 'x.txt': Buffer.from(`x${i + 1}`) },
        }),
      );
    }
    const results = await Promise.all(
      runs.map((r, i) => completeVersion(agents[i] as AgentClient, seed.bundleId, r.stagingId)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const versions = results.map((r) => r.body.version).sort((a, b) => a - b);
    expect([first.body.version, ...versions]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('deletes a version and a bundle (owner or admin only), removing objects no other version uses', async () => {
    const shared = Buffer.from('shared between versions');
    const only1 = Buffer.from('only in version one');
    const a = await stageAndPublish(t, agent, {
      manifest: manifestOf('doomed'),
      files: { 's.txt': shared, 'o.txt': only1 },
    });
    await completeVersion(agent, a.bundleId, a.stagingId);
    const b = await stageAndPublish(t, agent, {
      manifest: manifestOf('doomed', { glampId: a.bundleId }),
      files: { 's.txt': shared },
    });
    await completeVersion(agent, a.bundleId, b.stagingId);

    const member = t.newClient();
    const memberUser = await signUpUser(member);
    const org = (await owner.call(createOrg, { body: { name: 'Pub', slug: `pub-${kind}` } })).body;
    await joinOrganization(t, {
      owner,
      orgId: org.id,
      member,
      email: memberUser.user.email,
      role: 'member',
    });
    expect(
      (
        await member.callError(deleteBundleVersion, {
          params: { accountSlug: slug, name: 'doomed', version: '1' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await agent.callError(deleteBundle, { params: { accountSlug: slug, name: 'doomed' } }))
        .status,
    ).toBe(401);

    expect(
      (
        await owner.call(deleteBundleVersion, {
          params: { accountSlug: slug, name: 'doomed', version: '1' },
        })
      ).status,
    ).toBe(204);
    const store = t.ctx.bundles.store;
    expect(await store.stat(sha256(only1))).toBeUndefined();
    expect(await store.stat(sha256(shared))).toBeDefined();
    expect((await t.newClient().get(`/${slug}/doomed/versions/1`)).status).toBe(404);
    expect((await t.newClient().get(`/${slug}/doomed/versions/2`)).status).toBe(200);

    expect(
      (await owner.call(deleteBundle, { params: { accountSlug: slug, name: 'doomed' } })).status,
    ).toBe(204);
    expect(await store.stat(sha256(shared))).toBeUndefined();
    expect((await t.newClient().get(`/${slug}/doomed`)).status).toBe(404);
    // The deleted bundle's id is gone for its Agent too.
    const again = await stageAndPublish(t, agent, {
      manifest: manifestOf('doomed'),
      files: { 'n.txt': Buffer.from('n') },
    }).catch((e: Error) => e);
    expect(again).not.toBeInstanceOf(Error);
    const report = reportOf({ 'n.txt': Buffer.from('n') }, Buffer.from('d'));
    const staged = await agent.call(createStaging, {
      body: {
        manifest: manifestOf('doomed'),
        report,
      },
    });
    expect(
      (
        await agent.callError(publishBundle, {
          params: { slug: a.bundleId },
          body: {
            stagingId: staged.body.id,
            manifest: manifestOf('doomed'),
            files: report.files,
            tarball: report.tarball,
          },
        })
      ).status,
    ).toBe(404);
  });

  it('keeps a deleted version’s object that a publish under way declared, so its version is whole', async () => {
    const shared = Buffer.from('kept for the next version');
    const v1 = await stageAndPublish(t, agent, {
      manifest: manifestOf('raced'),
      files: { 's.txt': shared },
    });
    await completeVersion(agent, v1.bundleId, v1.stagingId);
    // The next publish declares the same file: stored already, so no upload is asked for it.
    const v2 = await stageAndPublish(t, agent, {
      manifest: manifestOf('raced', { glampId: v1.bundleId }),
      files: { 's.txt': shared },
    });
    expect(v2.uploads.map((u) => u.sha256)).not.toContain(sha256(shared));
    // Version 1 goes while that publish is under way.
    await owner.call(deleteBundleVersion, {
      params: { accountSlug: slug, name: 'raced', version: '1' },
    });
    expect(await t.ctx.bundles.store.stat(sha256(shared))).toBeDefined();
    await completeVersion(agent, v1.bundleId, v2.stagingId);
    const raw = await t.app.request(`/${slug}/raced/versions/2/files/s.txt?raw=1`);
    expect(raw.status).toBe(200);
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(shared);
  });

  it('lets an organization admin delete, and refuses a plain member with 403', async () => {
    const org = (await owner.call(createOrg, { body: { name: 'Team', slug: `team-${kind}` } }))
      .body;
    const orgAgent = await agentClient(t, owner, org.id);
    const run = await stageAndPublish(t, orgAgent, {
      manifest: manifestOf('team-bundle'),
      files: { 't.txt': Buffer.from('t') },
    });
    await completeVersion(orgAgent, run.bundleId, run.stagingId);
    const member = t.newClient();
    const admin = t.newClient();
    const m = await signUpUser(member);
    const ad = await signUpUser(admin);
    const orgId = org.id;
    await joinOrganization(t, { owner, orgId, member, email: m.user.email, role: 'member' });
    await joinOrganization(t, { owner, orgId, member: admin, email: ad.user.email, role: 'admin' });
    expect(
      (
        await member.callError(deleteBundle, {
          params: { accountSlug: org.slug, name: 'team-bundle' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await admin.call(deleteBundle, { params: { accountSlug: org.slug, name: 'team-bundle' } }))
        .status,
    ).toBe(204);
  });

  it('sweeps abandoned uploads: expired tickets and the objects only they brought', async () => {
    const sweep = () =>
      sweepUploads({ database: t.ctx.database, store: t.ctx.bundles.store, now: t.clock.now() });
    await sweep(); // what earlier tests left behind
    const kept = Buffer.from('kept by a version');
    const done = await stageAndPublish(t, agent, {
      manifest: manifestOf('sweep-kept'),
      files: { 'k.txt': kept },
    });
    await completeVersion(agent, done.bundleId, done.stagingId);
    const orphan = Buffer.from('uploaded, never completed');
    await stageAndPublish(t, agent, {
      manifest: manifestOf('sweep-orphan'),
      files: { 'k.txt': kept, 'o.txt': orphan },
    });
    const store = t.ctx.bundles.store;
    expect(await store.stat(sha256(orphan))).toBeDefined();
    // Not yet expired: nothing goes.
    expect(
      (await sweepUploads({ database: t.ctx.database, store, now: t.clock.now() })).objects,
    ).toBe(0);
    t.clock.advance(3 * 60 * 60 * 1000);
    const swept = await sweepUploads({ database: t.ctx.database, store, now: t.clock.now() });
    expect(swept.objects).toBeGreaterThanOrEqual(2);
    expect(await store.stat(sha256(orphan))).toBeUndefined();
    expect(await store.stat(sha256(tarballOf({ 'k.txt': kept, 'o.txt': orphan })))).toBeUndefined();
    expect(await store.stat(sha256(kept))).toBeDefined();
    expect(await store.stat(sha256(tarballOf({ 'k.txt': kept })))).toBeDefined();
  });

  it('shows the open staging and the published bundles in status', async () => {
    const status = await agent.call(getGlampStatus);
    expect(status.status).toBe(200);
    expect(status.body.bundles.map((b) => b.name)).toContain('first-bundle');
  });

  it("lists the account's published bundles with their versions, for members only", async () => {
    const res = await owner.call(listAccountBundles, { params: { id: accountId } });
    expect(res.status).toBe(200);
    const listed = res.body;
    expect(listed.map((b) => b.name)).toContain('first-bundle');
    // Each is what the public API says of it, versions newest first.
    for (const bundle of listed) {
      expect(
        (await owner.call(getBundle, { params: { accountSlug: slug, name: bundle.name } })).body,
      ).toEqual(bundle);
      const numbers = bundle.versions.map((v) => v.version);
      expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    }
    const stranger = t.newClient();
    const own = await signUpUser(stranger);
    expect(
      (await stranger.callError(listAccountBundles, { params: { id: accountId } })).status,
    ).toBe(404);
    expect(
      (await stranger.call(listAccountBundles, { params: { id: own.account.id } })).body,
    ).toEqual([]);
  });
});
