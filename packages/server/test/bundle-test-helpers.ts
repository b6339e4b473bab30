import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import {
  type BundleManifest,
  completePublish,
  createAgent,
  createStaging,
  publishBundle,
  type StagingReport,
} from '@svc/contract';
import { Header, type HeaderData } from 'tar';
import { issueAgentToken } from '../src/agents/agent-token.js';
import type { TestClient } from './test-client.js';
import type { TestContext } from './test-context.js';

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A new Agent of the client's personal account, and a client speaking with its token. */
export async function agentClient(t: TestContext, owner: TestClient, accountId?: string) {
  const res = await owner.call(createAgent, {
    body: {
      name: 'Publisher',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
      ...(accountId && { accountId }),
    },
  });
  return agentClientOf(t, res.body.id);
}

/** A client speaking with the token of an existing Agent (of this token generation). */
export function agentClientOf(t: TestContext, agentId: string, tokenGen = 1) {
  const token = issueAgentToken(t.ctx.secrets.hmacKey, agentId, tokenGen);
  const headers = { authorization: `Bearer ${token}` };
  const agent = t.newClient().withDefaults({ headers, origin: null });
  return {
    agentId,
    token,
    /** A raw path, for a body no descriptor would send (one the schema refuses on purpose). */
    post: (path: string, body?: unknown) => agent.post(path, body),
    call: agent.call,
    callError: agent.callError,
    send: agent.send,
  };
}
export type AgentClient = ReturnType<typeof agentClientOf>;

export const manifestOf = (name: string, extra: Partial<BundleManifest> = {}): BundleManifest => ({
  name,
  displayName: `Bundle ${name}`,
  description: 'A bundle for tests.',
  tags: ['test'],
  glampId: '',
  credentials: [],
  ...extra,
});

/** One tar entry as written, with no path clean-up (hostile tarballs are built with it too). */
export interface TarEntry {
  path: string;
  type?: NonNullable<HeaderData['type']>;
  body?: Buffer;
  linkpath?: string;
  /** The size the header declares; default: the body's length. */
  size?: number;
  mode?: number;
}

/** The blocks of an uncompressed tar: each header, its padded body, then two zero blocks. */
export function tarBlocks(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = entry.body ?? Buffer.alloc(0);
    const header = Buffer.alloc(512);
    new Header({
      path: entry.path,
      type: entry.type ?? 'File',
      size: entry.size ?? body.length,
      mode: entry.mode ?? (entry.type === 'Directory' ? 0o755 : 0o644),
      mtime: new Date('1985-10-26T08:15:00Z'),
      ...(entry.linkpath !== undefined && { linkpath: entry.linkpath }),
    }).encode(header, 0);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** A gzipped tarball of these entries, optionally with bytes after the end-of-archive blocks. */
export const tarGz = (entries: readonly TarEntry[], trailing?: Buffer) =>
  gzipSync(trailing ? Buffer.concat([tarBlocks(entries), trailing]) : tarBlocks(entries));

/** The honest tarball of these files, as `stage` would build it. */
export const tarballOf = (files: Record<string, Buffer>) =>
  tarGz(Object.entries(files).map(([path, body]) => ({ path, body })));

/** A staging report for these files and their tarball (default: the honest one). */
export function reportOf(
  files: Record<string, Buffer>,
  tarball: Buffer = tarballOf(files),
): StagingReport {
  const list = Object.entries(files).map(([path, bytes]) => ({
    path,
    size: bytes.length,
    sha256: sha256(bytes),
  }));
  return {
    fileCount: list.length,
    totalBytes: list.reduce((s, f) => s + f.size, 0),
    byExtension: [],
    flags: [],
    credentials: [],
    files: list,
    tarball: { size: tarball.length, sha256: sha256(tarball) },
  };
}

/** PUTs bytes to an upload URL through the in-memory app (the fs store's URLs point at it). */
export async function putObject(
  t: TestContext,
  upload: { url: string; headers: Record<string, string> },
  bytes: Buffer,
) {
  const res = await t.app.request(upload.url, {
    method: 'PUT',
    headers: upload.headers,
    body: bytes,
  });
  await res.arrayBuffer();
  return res.status;
}

/** stage → publish → upload everything → the publish body and the upload list, before complete. */
export async function stageAndPublish(
  t: TestContext,
  agent: AgentClient,
  input: {
    manifest: BundleManifest;
    files: Record<string, Buffer>;
    /** Default: the honest tarball of `files`. */
    tarball?: Buffer;
    slug?: string;
    skip?: (sha: string) => boolean;
    replace?: (sha: string) => Buffer | undefined;
    /** How bytes reach an upload URL; default: the in-memory app (the fs store's URLs). */
    put?: (
      upload: { url: string; headers: Record<string, string> },
      bytes: Buffer,
    ) => Promise<number>;
  },
) {
  const tarball = input.tarball ?? tarballOf(input.files);
  const report = reportOf(input.files, tarball);
  const staged = await agent.call(createStaging, { body: { manifest: input.manifest, report } });
  const slug = input.slug ?? (input.manifest.glampId || 'new');
  const published = await agent.call(publishBundle, {
    params: { slug },
    body: {
      stagingId: staged.body.id,
      manifest: input.manifest,
      files: report.files,
      tarball: report.tarball,
    },
  });
  const bySha = new Map<string, Buffer>([[sha256(tarball), tarball]]);
  for (const bytes of Object.values(input.files)) bySha.set(sha256(bytes), bytes);
  const statuses: number[] = [];
  for (const upload of published.body.uploads) {
    if (input.skip?.(upload.sha256)) continue;
    const bytes = input.replace?.(upload.sha256) ?? (bySha.get(upload.sha256) as Buffer);
    statuses.push(await (input.put ?? ((u, b) => putObject(t, u, b)))(upload, bytes));
  }
  return {
    stagingId: staged.body.id,
    bundleId: published.body.bundleId,
    uploads: published.body.uploads,
    statuses,
  };
}

const completion = (bundleId: string, stagingId: string) => ({
  params: { slug: bundleId },
  body: { stagingId },
});

/** Completes a publish, taking either answer (`completeVersion`, `completeRefused` expect one). */
export const complete = (agent: AgentClient, bundleId: string, stagingId: string) =>
  agent.send(completePublish, completion(bundleId, stagingId));

/** Completes a publish and expects the new version. */
export const completeVersion = (agent: AgentClient, bundleId: string, stagingId: string) =>
  agent.call(completePublish, completion(bundleId, stagingId));

/** Completes a publish and expects it refused, in the error envelope. */
export const completeRefused = (agent: AgentClient, bundleId: string, stagingId: string) =>
  agent.callError(completePublish, completion(bundleId, stagingId));

/**
 * Publishes a bundle (default: one README) through the whole flow; the clock moves a second
 * after each.
 */
export async function publishSimple(
  t: TestContext,
  agent: AgentClient,
  manifest: BundleManifest,
  files: Record<string, Buffer> = { 'README.md': Buffer.from(`# ${manifest.displayName}\n`) },
) {
  const published = await stageAndPublish(t, agent, { manifest, files });
  const done = await completeVersion(agent, published.bundleId, published.stagingId);
  t.clock.advance(1000);
  return { bundleId: published.bundleId, version: done.body.version };
}
