import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run } from '@svc/cli';
import {
  type AgentSource,
  type BundleManifest,
  createAgent,
  deleteBundleVersion,
  getAgent,
  listAgents,
  searchBundles,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  agentClient,
  completeVersion,
  manifestOf,
  sha256,
  stageAndPublish,
  tarballOf,
  tarGz,
} from '../../test/bundle-test-helpers.js';
import type { TestClient } from '../../test/test-client.js';
import {
  createLocalTestContext,
  createTestContext,
  signUpUser,
  type TestContext,
} from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import type { LocalComputeDriver } from '../adapters/compute/local-compute-driver.js';
import { objectKey } from '../adapters/object-store/object-store.js';
import { issueAgentToken } from '../agents/agent-token.js';

const SECRET = 'sk-adopter-secret-1234567890';
const CREDENTIALS: BundleManifest['credentials'] = [
  { key: 'OPENAI_API_KEY', description: 'The model provider', locations: ['.openclaw/.env:1'] },
  { key: 'SLACK_TOKEN', description: 'Posts to Slack', locations: ['.openclaw/.env:2'] },
];
const V1 = {
  'README.md': Buffer.from('# Helper\n\nVersion one.\n'),
  'notes/today.md': Buffer.from('first notes\n'),
  '.openclaw/.env': Buffer.from(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholders `stage` writes
    'OPENAI_API_KEY=${OPENAI_API_KEY}\nSLACK_TOKEN=${SLACK_TOKEN}\nMODEL=small\n',
  ),
};
const V2 = { 'README.md': Buffer.from('# Helper\n\nVersion two.\n'), 'v2.txt': Buffer.from('2\n') };

/** Publishes `files` as a version of `name` (a new bundle when `glampId` is empty). */
async function publish(
  t: TestContext,
  agent: AgentClient,
  manifest: BundleManifest,
  files: Record<string, Buffer>,
) {
  const staged = await stageAndPublish(t, agent, { manifest, files });
  const done = await completeVersion(agent, staged.bundleId, staged.stagingId);
  t.clock.advance(1000);
  return { bundleId: staged.bundleId, version: done.body.version };
}

/** A publisher's account with an Agent, an adopter's, and two versions of one bundle. */
async function twoVersions(
  t: TestContext,
  manifest: BundleManifest,
  [first, second]: [Record<string, Buffer>, Record<string, Buffer>],
) {
  const owner = t.newClient();
  const adopter = t.newClient();
  const slug = (await signUpUser(owner)).account.slug;
  await signUpUser(adopter);
  const publisher = await agentClient(t, owner);
  const { bundleId } = await publish(t, publisher, manifest, first);
  await publish(t, publisher, { ...manifest, glampId: bundleId }, second);
  return { owner, adopter, slug, publisher };
}

const adoption = (source: AgentSource, name: string) => ({
  body: { name, size: 'small', region: 'eu', billingType: 'metered', source } as const,
});
/** Creates an Agent from `source` and expects it made (201). */
const adopt = (client: TestClient, source: AgentSource, name = 'Adopted') =>
  client.call(createAgent, adoption(source, name));
/** Asks for an Agent from `source` and expects a refusal. */
const adoptRefused = (client: TestClient, source: AgentSource, name = 'Adopted') =>
  client.callError(createAgent, adoption(source, name));

const settled = async (client: TestClient, id: string) =>
  waitFor(
    async () => {
      const agent = (await client.call(getAgent, { params: { id } })).body;
      return agent.status === 'provisioning' ? undefined : agent;
    },
    30_000,
    'provisioning to end',
  );

describe('adopting a bundle into a new Agent (local driver)', () => {
  let t: TestContext & { readonly driver: LocalComputeDriver };
  let adopter: TestClient;
  let publisherSlug = '';
  let publisher: AgentClient;
  let owner: TestClient;

  beforeAll(async () => {
    t = await createLocalTestContext();
    const manifest = manifestOf('helper', { credentials: CREDENTIALS, tags: ['helper'] });
    ({ owner, adopter, slug: publisherSlug, publisher } = await twoVersions(t, manifest, [V1, V2]));
  }, 60_000);
  afterAll(() => t?.close());

  it('unpacks a version that is not the latest, with bundle.json and the credential set', async () => {
    const res = await adopt(adopter, {
      bundle: `${publisherSlug}/helper`,
      version: 1,
      credentials: { OPENAI_API_KEY: SECRET },
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect(res.body.adoptedFrom).toEqual({ bundle: `${publisherSlug}/helper`, version: 1 });
    expect(res.body.credentialsToSet).toEqual(['SLACK_TOKEN']);
    const agent = await settled(adopter, res.body.id);
    expect(agent.status).toBe('running');

    const home = t.driver.homeOf(agent.id);
    expect(await readFile(path.join(home, 'README.md'), 'utf8')).toContain('Version one.');
    expect(await readFile(path.join(home, 'notes/today.md'), 'utf8')).toBe('first notes\n');
    await expect(stat(path.join(home, 'v2.txt'))).rejects.toThrow();
    const manifest = JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'helper', glampId: '' });
    expect(manifest.adoptedFrom).toEqual({ bundle: `${publisherSlug}/helper`, version: 1 });
    const env = path.join(home, '.openclaw/.env');
    expect(await readFile(env, 'utf8')).toBe(
      `OPENAI_API_KEY='${SECRET}'\nSLACK_TOKEN=\${SLACK_TOKEN}\nMODEL=small\n`,
    );
    expect((await stat(env)).mode & 0o777).toBe(0o600);

    // The sealed values are gone once provisioning is over; the adoption is counted.
    const row = await t.ctx.database.db
      .selectFrom('agents')
      .select(['adoptionCredentials'])
      .where('id', '=', agent.id)
      .executeTakeFirstOrThrow();
    expect(row.adoptionCredentials).toBeNull();
    const found = (await adopter.call(searchBundles, { query: { q: 'helper' } })).body;
    expect(found.items.find((i) => i.name === 'helper')?.adoptions).toBe(1);
    expect(t.logs.lines.join('\n')).not.toContain(SECRET);
  }, 60_000);

  it('takes the latest version when none is named', async () => {
    const res = await adopt(adopter, { bundle: `${publisherSlug}/helper` }, 'Latest');
    expect(res.body.adoptedFrom?.version).toBe(2);
    expect(res.body.credentialsToSet).toEqual(['OPENAI_API_KEY', 'SLACK_TOKEN']);
    const agent = await settled(adopter, res.body.id);
    expect(agent.status).toBe('running');
    const home = t.driver.homeOf(agent.id);
    expect(await readFile(path.join(home, 'v2.txt'), 'utf8')).toBe('2\n');
    await expect(stat(path.join(home, '.openclaw/.env'))).rejects.toThrow();

    // `svc onboard` on the Agent lists what is still to set in TOOLS.md.
    const token = issueAgentToken(t.ctx.secrets.hmacKey, agent.id, 1);
    const code = await run(['onboard'], {
      env: { HOME: home, SVC_API_URL: t.ctx.config.http.publicUrl, SVC_HMAC_TOKEN: token },
      stdout: { write: () => {} },
      stderr: { write: () => {} },
      fetch: (input, init) => Promise.resolve(t.app.request(String(input), init)),
    });
    expect(code).toBe(0);
    const tools = await readFile(path.join(home, 'TOOLS.md'), 'utf8');
    expect(tools).toContain(`adopted from ${publisherSlug}/helper (version 2)`);
    expect(tools).toContain('- `OPENAI_API_KEY`: to set\n- `SLACK_TOKEN`: to set\n');
  }, 60_000);

  it('answers 404 for a bundle or version that is not there, 400 for a credential it lacks', async () => {
    const missing = [
      { bundle: `${publisherSlug}/nothing` },
      { bundle: `no-such-account/helper` },
      { bundle: `${publisherSlug}/helper`, version: 9 },
    ];
    for (const source of missing) {
      const res = await adoptRefused(adopter, source);
      expect(res.status, JSON.stringify(source)).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    const unknown = await adoptRefused(adopter, {
      bundle: `${publisherSlug}/helper`,
      credentials: { OPENAI_API_KEY: 'x', NOT_A_KEY: 'y' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toEqual([expect.objectContaining({ code: 'unknown_credential' })]);
    for (const source of [
      { bundle: 'helper' },
      { bundle: `${publisherSlug}/helper`, version: 0 },
      { bundle: `${publisherSlug}/helper`, credentials: { OPENAI_API_KEY: 'two\nlines' } },
    ]) {
      expect((await adoptRefused(adopter, source)).status, JSON.stringify(source)).toBe(400);
    }
    const agents = (await adopter.call(listAgents)).body;
    expect(agents.map((a) => a.name).sort()).toEqual(['Adopted', 'Latest']);
  });

  it('refuses a deleted version with 404', async () => {
    const manifest = manifestOf('short-lived');
    const first = await publish(t, publisher, manifest, { 'a.txt': Buffer.from('a') });
    await publish(t, publisher, { ...manifest, glampId: first.bundleId }, V2);
    await owner.call(deleteBundleVersion, {
      params: { accountSlug: publisherSlug, name: 'short-lived', version: '1' },
    });
    const res = await adoptRefused(adopter, { bundle: `${publisherSlug}/short-lived`, version: 1 });
    expect(res.status).toBe(404);
  });

  it('fails on a hostile tarball (a symlink, `../`) with nothing written outside the home', async () => {
    const { bundleId: hostileId } = await publish(t, publisher, manifestOf('hostile'), {
      'ok.txt': Buffer.from('fine\n'),
    });
    // The store's bytes swapped behind the service's back for a tarball that escapes.
    const escapeName = `escape-${Date.now()}.txt`;
    const hostile = tarGz([
      { path: 'ok.txt', body: Buffer.from('fine\n') },
      { path: 'link', type: 'SymbolicLink', linkpath: tmpdir() },
      { path: `link/${escapeName}`, body: Buffer.from('through the link\n') },
      { path: `../../../../../../../..${tmpdir()}/${escapeName}`, body: Buffer.from('up\n') },
    ]);
    const root = (t.ctx.config.objectStore as { root: string }).root;
    const file = path.join(root, objectKey(sha256(hostile)));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, hostile);
    await t.ctx.database.db
      .updateTable('bundleVersions')
      .set({ tarballSha256: sha256(hostile), tarballSize: BigInt(hostile.length) as never })
      .where('bundleId', '=', hostileId)
      .execute();

    const res = await adopt(adopter, { bundle: `${publisherSlug}/hostile` }, 'Hostile');
    const agent = await settled(adopter, res.body.id);
    expect(agent.status).toBe('error');
    expect(agent.statusReason).toBe('bundle_invalid');
    expect(await readdir(tmpdir())).not.toContain(escapeName);
    expect(await t.driver.getServer(agent.id)).toBeUndefined();
    await expect(stat(t.driver.homeOf(agent.id))).rejects.toThrow();
  }, 60_000);

  it('fails when the stored tarball is not the bytes published', async () => {
    const files = { 'ok.txt': Buffer.from('fine\n') };
    await publish(t, publisher, manifestOf('tampered'), files);
    const root = (t.ctx.config.objectStore as { root: string }).root;
    await writeFile(
      path.join(root, objectKey(sha256(tarballOf(files)))),
      tarballOf({ 'ok.txt': Buffer.from('evil\n') }),
    );

    const res = await adopt(adopter, { bundle: `${publisherSlug}/tampered` }, 'Tampered');
    const agent = await settled(adopter, res.body.id);
    expect([agent.status, agent.statusReason]).toEqual(['error', 'bundle_invalid']);
    expect(await t.driver.getServer(agent.id)).toBeUndefined();
  }, 60_000);
});

describe('a version deleted while its adoption is in flight', () => {
  let t: TestContext;
  afterAll(() => t?.close());

  it('fails the Agent with bundle_version_deleted and removes its machine', async () => {
    t = await createTestContext('pglite');
    const { owner, adopter, slug } = await twoVersions(t, manifestOf('fleeting'), [
      { 'one.txt': Buffer.from('1') },
      { 'two.txt': Buffer.from('2') },
    ]);

    t.compute.behave('createServer', { hang: true });
    const res = await adopt(adopter, { bundle: `${slug}/fleeting`, version: 1 });
    const id = res.body.id;
    await waitFor(
      () => t.compute.calls.some((c) => c.call === 'createServer' && c.id === id),
      30_000,
      'the machine being made',
    );
    await owner.call(deleteBundleVersion, {
      params: { accountSlug: slug, name: 'fleeting', version: '1' },
    });
    t.compute.release();

    const agent = await settled(adopter, id);
    expect(agent.status).toBe('error');
    expect(agent.statusReason).toBe('bundle_version_deleted');
    await waitFor(() => !t.compute.servers.has(id), 10_000, 'the machine removed');
    expect([...(t.compute.seededHomes.get(id)?.keys() ?? [])].sort()).toEqual([
      'bundle.json',
      'one.txt',
    ]);
  }, 60_000);
});
