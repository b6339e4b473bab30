import { createHash } from 'node:crypto';
import type { BundleManifest, StagingReport } from '@svc/contract';
import type { TestClient } from '../../test/test-client.js';
import type { TestContext } from '../../test/test-context.js';
import { issueAgentToken } from '../agents/agent-token.js';

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A new Agent of the client's personal account, and a client speaking with its token. */
export async function agentClient(t: TestContext, owner: TestClient, accountId?: string) {
  const res = await owner.post('/api/agents', {
    name: 'Publisher',
    size: 'small',
    region: 'eu',
    billingType: 'metered',
    ...(accountId && { accountId }),
  });
  if (res.status !== 201) throw new Error(`agent: ${res.status} ${JSON.stringify(res.body)}`);
  const token = issueAgentToken(t.ctx.secrets.hmacKey, res.body.id, 1);
  const headers = { authorization: `Bearer ${token}` };
  const agent = t.newClient();
  const as = { headers, origin: null };
  return {
    agentId: res.body.id as string,
    token,
    get: (path: string) => agent.get(path, as),
    post: (path: string, body?: unknown) => agent.post(path, body, as),
    delete: (path: string) => agent.delete(path, as),
  };
}
export type AgentClient = Awaited<ReturnType<typeof agentClient>>;

export const manifestOf = (name: string, extra: Partial<BundleManifest> = {}): BundleManifest => ({
  name,
  displayName: `Bundle ${name}`,
  description: 'A bundle for tests.',
  tags: ['test'],
  glampId: '',
  credentials: [],
  ...extra,
});

/** A staging report for these files; the "tarball" is any bytes standing in for one. */
export function reportOf(files: Record<string, Buffer>, tarball: Buffer): StagingReport {
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
    tarball: Buffer;
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
  const report = reportOf(input.files, input.tarball);
  const staged = await agent.post('/api/glamps/stagings', { manifest: input.manifest, report });
  if (staged.status !== 201)
    throw new Error(`stage: ${staged.status} ${JSON.stringify(staged.body)}`);
  const slug = input.slug ?? (input.manifest.glampId || 'new');
  const published = await agent.post(`/api/glamps/${slug}/publish`, {
    stagingId: staged.body.id,
    manifest: input.manifest,
    files: report.files,
    tarball: report.tarball,
  });
  if (published.status !== 200)
    throw new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`);
  const bySha = new Map<string, Buffer>([[sha256(input.tarball), input.tarball]]);
  for (const bytes of Object.values(input.files)) bySha.set(sha256(bytes), bytes);
  const statuses: number[] = [];
  for (const upload of published.body.uploads) {
    if (input.skip?.(upload.sha256)) continue;
    const bytes = input.replace?.(upload.sha256) ?? (bySha.get(upload.sha256) as Buffer);
    statuses.push(await (input.put ?? ((u, b) => putObject(t, u, b)))(upload, bytes));
  }
  return {
    stagingId: staged.body.id as string,
    bundleId: published.body.bundleId as string,
    uploads: published.body.uploads,
    statuses,
  };
}

export const complete = (agent: AgentClient, bundleId: string, stagingId: string) =>
  agent.post(`/api/glamps/${bundleId}/publish/complete`, { stagingId });
