import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { createAgent, deleteBundle } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAgentToken } from '../../server/src/agents/agent-token.js';
import { createTestContext, signUpUser, type TestContext } from '../../server/test/test-context.js';
import { run } from '../src/main.js';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** `${KEY}`, the placeholder stage writes. */
const placeholder = (key: string) => ['$', '{', key, '}'].join('');
const SECRET_ENV = 'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\nEMPTY=\n';
const FLAGGED = `ghp_${'Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5'.slice(0, 36)}`;

/**
 * svc run as on an Agent: this home, this service, this token; with `prompt`, as on a terminal
 * (`bin/svc.js` passes one only when stdin is a TTY).
 */
function cli(
  home: string,
  env: Record<string, string>,
  prompt?: (question: string) => Promise<string>,
) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(argv, {
      env: { HOME: home, ...env },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      ...(prompt && { prompt }),
    });
    return { code, out: out.join(''), err: err.join('') };
  };
}

/**
 * End to end: a real temporary home, the CLI's own commands, the real app served on loopback
 * with the fs object store. Two publishes; version 1 stays byte-identical.
 */
describe('svc glamp publishes a home end to end', () => {
  let t: TestContext;
  let close: () => Promise<void>;
  let home: string;
  let svc: ReturnType<typeof cli>;
  let slug: string;
  let owner: ReturnType<TestContext['newClient']>;
  /** The most uploads the service had in hand at once. */
  let maxUploadsInFlight = 0;
  /** The SHA-256 of every uploaded body, in arrival order. */
  const uploadedShas: string[] = [];
  beforeAll(async () => {
    const port = await freePort();
    t = await createTestContext('pglite', { env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    let inFlight = 0;
    const release: (() => void)[] = [];
    const fetch: typeof t.app.fetch = async (request, ...rest) => {
      const isUpload =
        request.method === 'PUT' &&
        new URL(request.url).pathname.startsWith('/api/objects/uploads/');
      if (!isUpload) return t.app.fetch(request, ...rest);
      const body = Buffer.from(await request.clone().arrayBuffer());
      uploadedShas.push(createHash('sha256').update(body).digest('hex'));
      inFlight += 1;
      maxUploadsInFlight = Math.max(maxUploadsInFlight, inFlight);
      // An upload waits for a second one (at most a second): uploads made one after the other
      // never overlap, concurrent ones always do.
      if (inFlight < 2) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          release.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      } else for (const go of release.splice(0)) go();
      try {
        return await t.app.fetch(request, ...rest);
      } finally {
        inFlight -= 1;
      }
    };
    const server = serve({ fetch, hostname: '127.0.0.1', port });
    close = () => new Promise((r) => server.close(() => r()));
    owner = t.newClient();
    slug = (await signUpUser(owner)).account.slug;
    const agent = await owner.call(createAgent, {
      body: { name: 'Pub', size: 'small', region: 'eu', billingType: 'metered' },
    });
    home = await mkdtemp(path.join(tmpdir(), 'svc-glamp-home-'));
    // As the platform leaves it on an Agent: the credentials in ~/.crabglamp/agent.env only.
    await mkdir(path.join(home, '.crabglamp'));
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      `SVC_API_URL=http://127.0.0.1:${port}\nSVC_AGENT_ID=${agent.body.id}\nSVC_HMAC_TOKEN=${issueAgentToken(t.ctx.secrets.hmacKey, agent.body.id, 1)}\n`,
      { mode: 0o600 },
    );
    svc = cli(home, {});
    await writeFile(
      path.join(home, 'README.md'),
      '# My glamp\n\nIt <script>alert(1)</script> works.\n',
    );
    await mkdir(path.join(home, 'projects/app'), { recursive: true });
    await writeFile(path.join(home, 'projects/app/index.js'), 'console.log("hi");\n');
    await writeFile(path.join(home, 'projects/app/run.sh'), '#!/bin/sh\necho run\n');
    await chmod(path.join(home, 'projects/app/run.sh'), 0o755);
    await writeFile(path.join(home, 'projects/app/debug.log'), 'noise\n');
    await writeFile(path.join(home, 'projects/app/__init__.py'), '');
    await writeFile(path.join(home, '.bundleignore'), '*.log\nscratch/\n');
    await mkdir(path.join(home, 'scratch'));
    await writeFile(path.join(home, 'scratch/tmp.txt'), 'x');
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh/id_ed25519'), 'PRIVATE');
    await symlink(path.join(home, '.ssh/id_ed25519'), path.join(home, 'key-link'));
    await symlink('/etc/hostname', path.join(home, 'outside-link'));
    await writeFile(path.join(home, '.bash_history'), 'secret commands');
    await mkdir(path.join(home, 'node_modules/x'), { recursive: true });
    await writeFile(path.join(home, 'node_modules/x/i.js'), '1');
    await mkdir(path.join(home, '.openclaw'));
    await writeFile(path.join(home, '.openclaw/.env'), SECRET_ENV);
    await writeFile(
      path.join(home, '.openclaw/openclaw.json'),
      JSON.stringify({
        models: { providers: { anthropic: { apiKey: 'sk-ant-secret-value-1234567890' } } },
        theme: 'dark',
      }),
    );
    await writeFile(path.join(home, 'notes.txt'), `token = ${FLAGGED}\n`);
  });
  afterAll(async () => {
    await close?.();
    await t?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('init refuses invalid fields, naming each, and writes a valid manifest', async () => {
    const bad = await svc(
      'glamp',
      'init',
      '--name',
      'Not Kebab',
      '--display-name',
      'x',
      '--description',
      'y',
      '--tags',
      'Bad Tag',
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/name: Use kebab-case/);
    expect(bad.err).toMatch(/tags\.0: Tags are kebab-case/);
    const ok = await svc(
      'glamp',
      'init',
      '--name',
      'my-glamp',
      '--display-name',
      'My Glamp',
      '--description',
      'A home worth sharing.',
      '--tags',
      'demo,tools',
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'))).toMatchObject({
      name: 'my-glamp',
      glampId: '',
      tags: ['demo', 'tools'],
    });
  });

  it('stage strips credentials, flags secrets without printing them, and excludes what it must', async () => {
    const staged = await svc('glamp', 'stage');
    expect(staged.code).toBe(0);
    // Without a terminal: one summary line per step, and nothing else.
    expect(staged.err).toMatch(
      /^Scanned 9 files, \d+ B in \d+\.\d s \([\d.]+ [kM]?B\/s\)\nPacked 9 files, \d+ B in \d+\.\d s \([\d.]+ [kM]?B\/s\)\n$/,
    );
    expect(staged.out).toMatch(/notes\.txt:1\s+github-pat/);
    expect(staged.out).toContain('OPENAI_API_KEY');
    for (const secret of [
      FLAGGED,
      'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789',
      'sk-ant-secret-value-1234567890',
    ]) {
      expect(staged.out).not.toContain(secret);
    }
    const stagingDir = path.join(home, '.crabglamp/glamp-staging');
    expect(await readFile(path.join(stagingDir, '.openclaw/.env'), 'utf8')).toBe(
      `OPENAI_API_KEY=${placeholder('OPENAI_API_KEY')}\nEMPTY=\n`,
    );
    expect(await readFile(path.join(stagingDir, '.openclaw/openclaw.json'), 'utf8')).toContain(
      `"apiKey": "${placeholder('ANTHROPIC_API_KEY')}"`,
    );
    const listed = execFileSync('find', ['.', '-type', 'f'], { cwd: stagingDir, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .sort();
    expect(listed).toEqual(
      [
        './.bundleignore',
        './.openclaw/.env',
        './.openclaw/openclaw.json',
        './README.md',
        './bundle.json',
        './notes.txt',
        './projects/app/__init__.py',
        './projects/app/index.js',
        './projects/app/run.sh',
      ].sort(),
    );
    const manifest = JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'));
    expect(manifest.credentials.map((c: { key: string }) => c.key)).toEqual([
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
    ]);
    const status = await svc('glamp', 'status');
    expect(status.out).toMatch(/Open staging .* \(staged\): my-glamp, 9 files, 1 flags/);
  });

  it('confirm refuses a flag that stage did not report', async () => {
    const extra = path.join(home, '.crabglamp/glamp-staging/late.txt');
    await writeFile(extra, `aws = AKIA${'QWERTYUIOPASDFGH'}\n`);
    const rescan = await svc('glamp', 'rescan');
    expect(rescan.code).toBe(1);
    expect(rescan.out).toMatch(/late\.txt:1\s+aws-access-token/);
    const refused = await svc('glamp', 'confirm');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/late\.txt:1\s+aws-access-token/);
    await rm(extra);
  });

  it('confirm publishes what stage flagged only when the author says yes', async () => {
    // No terminal to ask on: refused, naming the flag (never its value) and the way out.
    const piped = await svc('glamp', 'confirm');
    expect(piped.code).toBe(1);
    expect(piped.err).toMatch(/notes\.txt:1\s+github-pat/);
    expect(piped.err).toContain('--accept-flags');
    expect(piped.err).not.toContain(FLAGGED);
    // On a terminal the author is asked; anything but yes publishes nothing.
    for (const answer of ['', 'n', 'no way']) {
      const questions: string[] = [];
      const asked = cli(home, {}, async (question) => {
        questions.push(question);
        return answer;
      });
      const declined = await asked('glamp', 'confirm');
      expect(declined.code).toBe(1);
      expect(declined.err).toMatch(/notes\.txt:1\s+github-pat/);
      expect(questions).toEqual(['Publish them? [y/N] ']);
    }
    expect((await t.app.request(`/${slug}/my-glamp`)).status).toBe(404);
    expect(JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8')).glampId).toBe('');
  });

  it('confirm publishes version 1; a second publish gives version 2; version 1 stays identical', async () => {
    const first = await cli(home, {}, async () => 'yes')('glamp', 'confirm');
    // 9 files and the tarball, four at a time.
    expect(first.err).toMatch(
      /^Checked 9 files, .*\n[\s\S]*\nPacked 9 files, .*\nUploaded 10 files, .*\/s\)\n$/,
    );
    expect(maxUploadsInFlight).toBeGreaterThan(1);
    expect(maxUploadsInFlight).toBeLessThanOrEqual(4);
    expect(first.out).toMatch(
      new RegExp(`Published version 1: http://127\\.0\\.0\\.1:\\d+/${slug}/my-glamp`),
    );
    const manifest = JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'));
    expect(manifest.glampId).toMatch(/^[0-9a-f-]{36}$/);
    const v1Tarball = Buffer.from(
      await (await t.app.request(`/${slug}/my-glamp/versions/1/download`)).arrayBuffer(),
    );
    const page = await (await t.app.request(`/${slug}/my-glamp`)).text();
    expect(page).toContain('<h1>My glamp</h1>');
    expect(page).not.toContain('<script>');
    expect(page).toContain('projects/app/run.sh');
    expect(page).toContain('OPENAI_API_KEY');

    await writeFile(path.join(home, 'projects/app/index.js'), 'console.log("v2");\n');
    // --json: one document on stdout, no progress lines without a terminal.
    const staged = await svc('glamp', 'stage', '--json');
    expect(staged.code).toBe(0);
    expect(staged.err).toBe('');
    const report = JSON.parse(staged.out);
    expect(report).toMatchObject({ fileCount: 9, flags: [{ file: 'notes.txt' }] });
    expect(report.files).toHaveLength(9);
    expect(report.totalBytes).toBe(
      report.files.reduce((sum: number, f: { size: number }) => sum + f.size, 0),
    );
    expect(report.steps.map((s: { step: string; files: number }) => [s.step, s.files])).toEqual([
      ['scan', 9],
      ['tarball', 9],
    ]);
    const rescanned = await svc('glamp', 'rescan', '--json');
    expect(rescanned.code).toBe(0);
    expect(JSON.parse(rescanned.out)).toMatchObject({
      stagingId: report.stagingId,
      fileCount: 9,
      newFlags: [],
    });
    // A script is never asked: without --accept-flags the flags are refused, in JSON too.
    const asked = await cli(home, {}, async () => 'yes')('glamp', 'confirm', '--json');
    expect(asked.code).toBe(1);
    expect(JSON.parse(asked.out)).toMatchObject({
      published: false,
      reason: 'flags_not_accepted',
    });
    const second = await svc('glamp', 'confirm', '--accept-flags', '--json');
    expect(second.code).toBe(0);
    const result = JSON.parse(second.out);
    expect(result).toMatchObject({ published: true, version: 2, fileCount: 9 });
    expect(result.url).toMatch(new RegExp(`/${slug}/my-glamp$`));
    // Only what the store lacks goes up: the changed file, bundle.json and the tarball.
    expect(result.uploaded.objects).toBeLessThan(10);
    expect(result.steps.map((s: { step: string }) => s.step)).toEqual([
      'check',
      'tarball',
      'upload',
    ]);
    expect(result.steps[2].files).toBe(result.uploaded.objects);
    expect(result.steps[2].bytes).toBe(result.uploaded.bytes);
    const again = Buffer.from(
      await (await t.app.request(`/${slug}/my-glamp/versions/1/download`)).arrayBuffer(),
    );
    expect(again.equals(v1Tarball)).toBe(true);
    const oldFile = await (
      await t.app.request(`/${slug}/my-glamp/versions/1/files/projects/app/index.js?raw=1`)
    ).text();
    expect(oldFile).toBe('console.log("hi");\n');
    // The tarball unpacks to the staged files, with the executable bit kept.
    const unpack = await mkdtemp(path.join(tmpdir(), 'svc-unpack-'));
    await writeFile(path.join(unpack, 'v1.tgz'), again);
    execFileSync('tar', ['xzf', 'v1.tgz'], { cwd: unpack });
    expect(await readFile(path.join(unpack, 'README.md'), 'utf8')).toContain('My glamp');
    expect(
      execFileSync('stat', ['-c', '%a', path.join(unpack, 'projects/app/run.sh')], {
        encoding: 'utf8',
      }).trim(),
    ).toBe('755');
    expect(createHash('sha256').update(again).digest('hex')).toMatch(/^[0-9a-f]{64}$/);
    await rm(unpack, { recursive: true, force: true });
    const status = await svc('glamp', 'status');
    expect(status.out).toMatch(new RegExp(`${slug}/my-glamp\\s+version 2`));
    const statusJson = JSON.parse((await svc('glamp', 'status', '--json')).out);
    expect(statusJson).toMatchObject({
      staging: null,
      bundles: [{ accountSlug: slug, name: 'my-glamp', latestVersion: 2 }],
    });
  });

  it('republishing after one changed file uploads that file and the tarball only', async () => {
    // Version 2 carried bundle.json with the glampId the first publish wrote into it: from
    // here on, the home differs from the last version by one file.
    const changed = 'console.log("v3");\n';
    await writeFile(path.join(home, 'projects/app/index.js'), changed);
    expect((await svc('glamp', 'stage')).code).toBe(0);
    uploadedShas.length = 0;
    const third = await svc('glamp', 'confirm', '--accept-flags', '--json');
    expect(third.code).toBe(0);
    const result = JSON.parse(third.out);
    expect(result).toMatchObject({ published: true, version: 3, fileCount: 9 });
    const changedSha = createHash('sha256').update(changed).digest('hex');
    expect(uploadedShas.sort()).toEqual([changedSha, result.tarball.sha256].sort());
    expect(result.uploaded).toEqual({
      objects: 2,
      bytes: result.tarball.size + Buffer.byteLength(changed),
    });
    // The file browser and the tarball still hold every file, the unchanged ones included.
    const readme = await t.app.request(`/${slug}/my-glamp/versions/3/files/README.md?raw=1`);
    expect(await readme.text()).toContain('# My glamp');
    const tarball = Buffer.from(
      await (await t.app.request(`/${slug}/my-glamp/versions/3/download`)).arrayBuffer(),
    );
    const unpack = await mkdtemp(path.join(tmpdir(), 'svc-unpack-'));
    await writeFile(path.join(unpack, 'v3.tgz'), tarball);
    const listed = execFileSync('tar', ['tzf', 'v3.tgz'], { cwd: unpack, encoding: 'utf8' });
    expect(listed.split('\n').filter(Boolean)).toHaveLength(9);
    execFileSync('tar', ['xzf', 'v3.tgz'], { cwd: unpack });
    expect(await readFile(path.join(unpack, 'projects/app/index.js'), 'utf8')).toBe(changed);
    await rm(unpack, { recursive: true, force: true });
  });

  it('cancel removes the staging directory and cancels the staging', async () => {
    expect((await svc('glamp', 'stage')).code).toBe(0);
    const cancelled = await svc('glamp', 'cancel');
    expect(cancelled.out).toMatch(/Cancelled staging/);
    await expect(readFile(path.join(home, '.crabglamp/glamp-staging/README.md'))).rejects.toThrow();
    expect((await svc('glamp', 'status')).out).toMatch(/No open staging/);
  });

  it('says so when the bundle was deleted, and publishes anew once glampId is emptied', async () => {
    await owner.call(deleteBundle, { params: { accountSlug: slug, name: 'my-glamp' } });
    expect((await svc('glamp', 'stage')).code).toBe(0);
    const refused = await svc('glamp', 'confirm', '--accept-flags');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/no longer exists/);
    const manifestFile = path.join(home, 'bundle.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
    await writeFile(manifestFile, JSON.stringify({ ...manifest, glampId: '' }));
    expect((await svc('glamp', 'stage')).code).toBe(0);
    expect((await svc('glamp', 'confirm', '--accept-flags')).out).toMatch(/Published version 1/);
  });
});
