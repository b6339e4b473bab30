import type { KeyObject } from 'node:crypto';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  ENV_PUSH_SIGNATURE_HEADER,
  HOME_SEED_CLAIM_HEADER,
  HOME_SEED_PATH,
  signHomeSeed,
} from '@svc/contract/agent-env-push';
import { create } from 'tar';
import { sleep } from './hcloud-client.js';

export interface HomeSeedPush {
  readonly agentId: string;
  /** Where the Agent's gateway listens. */
  readonly gateway: { readonly host: string; readonly port: number };
  readonly pushKey: KeyObject;
  /** The tree the home starts from (files and directories only). */
  readonly seedDir: string;
  /** How long the server may take to boot and start its gateway. */
  readonly waitMs: number;
}

const HEALTH_POLL_MS = 3_000;

/**
 * Brings an adopted home into a Hetzner Agent: its disk is reachable only once it runs, so the
 * tree goes to the gateway as soon as it answers (`POST /_svc/home-seed`, signed with the push
 * key; see `@svc/contract/agent-env-push`), as a gzipped tarball of files and directories, owner-
 * less. The gateway takes one seed per machine and the same one again as done, so a retry is safe.
 */
export async function pushHomeSeed(push: HomeSeedPush): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'svc-seed-'));
  try {
    const tarball = path.join(work, 'home.tar.gz');
    await create(
      { gzip: true, cwd: push.seedDir, file: tarball, portable: true, noMtime: true },
      (await readdir(push.seedDir)).sort(),
    );
    const { size } = await stat(tarball);
    const sha256 = await hashOf(tarball);
    const host = push.gateway.host.includes(':') ? `[${push.gateway.host}]` : push.gateway.host;
    const base = `http://${host}:${push.gateway.port}`;
    await gatewayUp(base, push.waitMs);
    const signed = signHomeSeed(push.pushKey, {
      agentId: push.agentId,
      issuedAt: Date.now(),
      sha256,
      size,
    });
    const response = await fetch(`${base}${HOME_SEED_PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/gzip',
        'content-length': String(size),
        [HOME_SEED_CLAIM_HEADER]: signed.claim,
        [ENV_PUSH_SIGNATURE_HEADER]: signed.signature,
      },
      body: Readable.toWeb(createReadStream(tarball)) as ReadableStream,
      duplex: 'half',
      // The machine is its user's: a redirect could aim the signed push anywhere.
      redirect: 'error',
      signal: AbortSignal.timeout(10 * 60_000),
    } as RequestInit);
    if (response.status !== 204) {
      const detail = ((await response.json().catch(() => ({}))) as { detail?: string }).detail;
      throw new Error(
        `Agent ${push.agentId}'s gateway refused its home: ${response.status}${detail ? ` (${detail})` : ''}`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function hashOf(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Waits until the gateway answers its health check (the server booted and cloud-init ran). */
async function gatewayUp(base: string, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    const ok = await fetch(`${base}/_svc/health`, {
      redirect: 'error',
      signal: AbortSignal.timeout(5_000),
    }).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error(`the gateway at ${base} did not answer in time`);
    await sleep(HEALTH_POLL_MS);
  }
}
