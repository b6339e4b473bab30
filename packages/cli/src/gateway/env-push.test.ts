import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type EnvPush,
  pushPrivateKey,
  pushPublicKey,
  signEnvPush,
} from '@svc/contract/agent-env-push';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_ENV_FILE, readAgentEnv } from '../agent-env.js';
import { EnvPushes } from './env-push.js';

const SERVICE_KEY = Buffer.alloc(32, 7);
const AGENT = '4f1c2a9e-0b5d-4e8a-9c3f-1a2b3c4d5e6f';
const NOW = Date.UTC(2026, 10, 24, 12);

describe('pushes of new credentials to an Agent gateway', () => {
  let home = '';
  beforeEach(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-push-'));
    await mkdir(path.join(home, '.crabglamp'));
    await writeFile(
      path.join(home, AGENT_ENV_FILE),
      `SVC_API_URL=https://svc.example\nSVC_AGENT_ID=${AGENT}\nSVC_HMAC_TOKEN=old\nSVC_PUSH_KEY=${pushPublicKey(SERVICE_KEY)}\n`,
      { mode: 0o600 },
    );
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  const push = (fields: Partial<EnvPush> = {}, key = SERVICE_KEY) =>
    signEnvPush(pushPrivateKey(key), {
      agentId: AGENT,
      issuedAt: NOW,
      env: { SVC_HMAC_TOKEN: 'new' },
      ...fields,
    });

  it('takes a push signed by the service into agent.env, 0600', async () => {
    const { body, signature } = push({
      env: { SVC_HMAC_TOKEN: 'new', SVC_PUSH_KEY: 'attacker', SVC_AGENT_ID: 'other' },
    });
    expect(await new EnvPushes(home).take(body, signature, NOW + 1000)).toEqual({ status: 204 });
    const env = await readAgentEnv(home);
    expect(env).toMatchObject({
      SVC_HMAC_TOKEN: 'new',
      SVC_AGENT_ID: AGENT,
      SVC_PUSH_KEY: pushPublicKey(SERVICE_KEY),
      SVC_PUSHED_AT: String(NOW),
    });
    expect((await stat(path.join(home, AGENT_ENV_FILE))).mode & 0o777).toBe(0o600);
  });

  it('refuses another key, another Agent, an old push, a replay and a garbled signature', async () => {
    const pushes = new EnvPushes(home);
    const refused = async (p: { body: string; signature: string }, at = NOW) =>
      (await pushes.take(p.body, p.signature, at)).reason;
    expect(await refused(push({}, Buffer.alloc(32, 8)))).toBe('bad signature');
    expect(await refused(push({ agentId: 'a-different-agent' }))).toBe('another Agent');
    expect(await refused(push(), NOW + 6 * 60_000)).toBe('too old');
    const { body } = push();
    expect(await refused({ body, signature: 'AAAA' })).toBe('bad signature');
    expect(await refused({ body: body.replace('new', 'evil'), signature: push().signature })).toBe(
      'bad signature',
    );
    const first = push();
    expect((await pushes.take(first.body, first.signature, NOW)).status).toBe(204);
    expect(await refused(first)).toBe('not newer than the last push');
    expect(await refused(push({ issuedAt: NOW - 1 }))).toBe('not newer than the last push');
    expect((await readAgentEnv(home)).SVC_HMAC_TOKEN).toBe('new');
  });

  it('never goes back to an older token generation, whatever the order pushes arrive in', async () => {
    const pushes = new EnvPushes(home);
    const token = (generation: number) => `svc1.${AGENT}.${generation}.mac`;
    const newer = push({ issuedAt: NOW, env: { SVC_HMAC_TOKEN: token(3) } });
    const older = push({ issuedAt: NOW + 1000, env: { SVC_HMAC_TOKEN: token(2) } });
    expect((await pushes.take(newer.body, newer.signature, NOW)).status).toBe(204);
    expect(await pushes.take(older.body, older.signature, NOW + 1000)).toEqual({
      status: 403,
      reason: 'an older token',
    });
    expect((await readAgentEnv(home)).SVC_HMAC_TOKEN).toBe(token(3));
  });

  it('takes no push on a machine without the push key', async () => {
    await writeFile(path.join(home, AGENT_ENV_FILE), `SVC_AGENT_ID=${AGENT}\nSVC_HMAC_TOKEN=old\n`);
    const { body, signature } = push();
    expect((await new EnvPushes(home).take(body, signature, NOW)).status).toBe(404);
    expect(await readFile(path.join(home, AGENT_ENV_FILE), 'utf8')).toContain('SVC_HMAC_TOKEN=old');
  });
});
