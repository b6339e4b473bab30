import type { KeyObject } from 'node:crypto';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ENV_PUSH_SIGNATURE_HEADER,
  HOME_SEED_CLAIM_HEADER,
  HOME_SEED_PATH,
  signHomeSeed,
} from '@svc/contract/agent-env-push';
import { create } from 'tar';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import { type GatewayAddress, gatewayExchange } from './gateway-exchange.js';

export interface HomeSeedPush {
  readonly agentId: string;
  /** Where the Agent's gateway listens (enrolled: it shows the CA's certificate for it). */
  readonly gateway: GatewayAddress;
  readonly ca: GatewayCa;
  readonly pushKey: KeyObject;
  /** The tree the home starts from (files and directories only). */
  readonly seedDir: string;
  /** The gateway key enrolled for the machine (`keyFingerprint`), which it must show. */
  readonly pin?: string | undefined;
}

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
    const signed = signHomeSeed(push.pushKey, {
      agentId: push.agentId,
      issuedAt: Date.now(),
      sha256,
      size,
    });
    const response = await gatewayExchange(
      push.ca,
      push.gateway,
      { kind: 'machine', pin: push.pin },
      {
        method: 'POST',
        path: HOME_SEED_PATH,
        headers: {
          'content-type': 'application/gzip',
          'content-length': String(size),
          [HOME_SEED_CLAIM_HEADER]: signed.claim,
          [ENV_PUSH_SIGNATURE_HEADER]: signed.signature,
        },
        body: createReadStream(tarball),
        timeoutMs: 10 * 60_000,
      },
    );
    if (response.status !== 204) {
      const detail = /"detail":"([^"]*)"/.exec(response.body)?.[1];
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
