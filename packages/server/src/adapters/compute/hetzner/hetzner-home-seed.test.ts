import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ENV_PUSH_SIGNATURE_HEADER,
  HOME_SEED_CLAIM_HEADER,
  HOME_SEED_PATH,
  pushPrivateKey,
  pushPublicKey,
  signHomeSeed,
} from '@svc/contract/agent-env-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TarEntry, tarGz } from '../../../../test/bundle-test-helpers.js';
import { TEST_ENV } from '../../../../test/test-context.js';
import { startTestGateway } from '../../../../test/test-gateway.js';
import { AGENT_ENV_PATH } from '../agent-env-file.js';

// What an Agent's gateway does with home seeds it did not expect: each is refused, and nothing
// lands outside the home or in the gateway's own state.

const HMAC_KEY = Buffer.from(TEST_ENV.HMAC_KEY, 'base64');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe("an Agent's gateway taking a home seed", () => {
  const agentId = randomUUID();
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let agentEnv = '';

  beforeAll(async () => {
    gateway = await startTestGateway({
      SVC_AGENT_ID: agentId,
      SVC_HMAC_TOKEN: 'svc1.t',
      SVC_PUSH_KEY: pushPublicKey(HMAC_KEY),
    });
    agentEnv = await readFile(path.join(gateway.home, AGENT_ENV_PATH), 'utf8');
  });
  afterAll(() => gateway?.close());

  const send = async (
    body: Buffer,
    claim: { agentId?: string; size?: number; sha256?: string } = {},
    key = pushPrivateKey(HMAC_KEY),
  ) => {
    const signed = signHomeSeed(key, {
      agentId: claim.agentId ?? agentId,
      issuedAt: Date.now(),
      sha256: claim.sha256 ?? sha256(body),
      size: claim.size ?? body.length,
    });
    const res = await fetch(`http://127.0.0.1:${gateway.port}${HOME_SEED_PATH}`, {
      method: 'POST',
      headers: {
        [HOME_SEED_CLAIM_HEADER]: signed.claim,
        [ENV_PUSH_SIGNATURE_HEADER]: signed.signature,
      },
      body,
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as unknown };
  };
  const homeEntries = async () => (await readdir(gateway.home, { recursive: true })).sort();

  it('refuses a seed signed with another key, for another Agent, or not of the bytes claimed', async () => {
    const honest = tarGz([{ path: 'a.txt', body: Buffer.from('a') }]);
    expect((await send(honest, {}, pushPrivateKey(Buffer.alloc(32, 7)))).status).toBe(403);
    expect((await send(honest, { agentId: randomUUID() })).status).toBe(403);
    expect((await send(honest, { size: honest.length - 1 })).status).toBe(400);
    expect((await send(honest, { sha256: sha256(Buffer.from('other')) })).status).toBe(400);
    expect(await homeEntries()).toEqual(['.crabglamp', '.crabglamp/agent.env']);
  });

  it.each<[string, TarEntry[]]>([
    [
      'a symlink and a file through it',
      [
        { path: 'out', type: 'SymbolicLink', linkpath: '..' },
        { path: 'out/escaped.txt', body: Buffer.from('x') },
      ],
    ],
    ['a path up out of the home', [{ path: '../escaped.txt', body: Buffer.from('x') }]],
    ['a hard link', [{ path: 'hard', type: 'Link', linkpath: '/etc/passwd' }]],
    [
      "the gateway's own state",
      [{ path: '.crabglamp/agent.env', body: Buffer.from('SVC_PUSH_KEY=evil\n') }],
    ],
  ])('refuses %s, writing nothing outside the home or over its state', async (_, entries) => {
    const parent = path.dirname(gateway.home);
    const before = (await readdir(parent)).sort();
    const answer = await send(tarGz(entries));
    expect(answer.status).toBe(400);
    expect((await readdir(parent)).sort()).toEqual(before);
    expect(await readFile(path.join(gateway.home, AGENT_ENV_PATH), 'utf8')).toBe(agentEnv);
    expect(await homeEntries()).not.toContain('.crabglamp/home-seed');
  });

  it('takes one seed; the same again is done, another is refused', async () => {
    const seed = tarGz([{ path: 'notes/a.txt', body: Buffer.from('seeded\n') }]);
    expect((await send(seed)).status).toBe(204);
    expect(await readFile(path.join(gateway.home, 'notes/a.txt'), 'utf8')).toBe('seeded\n');
    expect((await send(seed)).status).toBe(204);
    const other = tarGz([{ path: 'notes/a.txt', body: Buffer.from('replaced\n') }]);
    expect((await send(other)).status).toBe(409);
    expect(await readFile(path.join(gateway.home, 'notes/a.txt'), 'utf8')).toBe('seeded\n');
  });
});
