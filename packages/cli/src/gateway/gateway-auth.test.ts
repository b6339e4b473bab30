import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gatewayKeyFromToken, issueGatewayTicket } from '@svc/contract/gateway-ticket';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_ENV_FILE } from '../agent-env.js';
import { GatewayAuth, SPENT_TICKETS_FILE } from './gateway-auth.js';

const agentId = '3f0b8a4e-6c1d-4e7a-9b2c-1d2e3f4a5b6c';
const token = `svc1.${agentId}.1.${'b'.repeat(43)}`;
const key = gatewayKeyFromToken(token)?.key as Buffer;
const now = 1_800_000_000;

describe('gateway tickets spent across restarts', () => {
  let home: string;
  const env = () => ({ HOME: home });
  const ticket = () => issueGatewayTicket(key, { agentId, gen: 1, nowSeconds: now }).ticket;
  beforeEach(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-gateway-auth-'));
    await mkdir(path.join(home, '.crabglamp'));
    await writeFile(
      path.join(home, AGENT_ENV_FILE),
      `SVC_API_URL=http://127.0.0.1:1\nSVC_HMAC_TOKEN=${token}\n`,
    );
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('refuses a ticket spent before the gateway restarted, and accepts a fresh one', async () => {
    const spent = ticket();
    const before = new GatewayAuth(env(), () => now + 1);
    expect(await before.redeemTicket(spent)).toMatchObject({ ok: true });
    expect(await before.redeemTicket(spent)).toEqual({ ok: false, reason: 'reused' });
    const file = path.join(home, SPENT_TICKETS_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const restarted = new GatewayAuth(env(), () => now + 2);
    expect(await restarted.redeemTicket(spent)).toEqual({ ok: false, reason: 'reused' });
    expect(await restarted.redeemTicket(ticket())).toMatchObject({ ok: true });
  });

  it('lets one of two concurrent redemptions of a ticket through', async () => {
    const auth = new GatewayAuth(env(), () => now + 1);
    const one = ticket();
    const results = await Promise.all([auth.redeemTicket(one), auth.redeemTicket(one)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('forgets expired nonces, and starts afresh from a damaged file', async () => {
    const auth = new GatewayAuth(env(), () => now + 1);
    await auth.redeemTicket(ticket());
    const later = new GatewayAuth(env(), () => now + 3600);
    const fresh = issueGatewayTicket(key, { agentId, gen: 1, nowSeconds: now + 3599 }).ticket;
    expect(await later.redeemTicket(fresh)).toMatchObject({ ok: true });
    const saved = JSON.parse(await readFile(path.join(home, SPENT_TICKETS_FILE), 'utf8'));
    expect(Object.keys(saved)).toHaveLength(1);

    await writeFile(path.join(home, SPENT_TICKETS_FILE), '{not json');
    const damaged = new GatewayAuth(env(), () => now + 1);
    expect(await damaged.redeemTicket(ticket())).toMatchObject({ ok: true });
  });
});
