import { describe, expect, it } from 'vitest';
import {
  checkGatewayCookie,
  checkGatewayTicket,
  GATEWAY_TICKET_TTL_SECONDS,
  gatewayKey,
  gatewayKeyFromToken,
  issueGatewayCookie,
  issueGatewayTicket,
} from './gateway-ticket.js';

const agentId = '3f0b8a4e-6c1d-4e7a-9b2c-1d2e3f4a5b6c';
const otherAgent = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const mac = 'a'.repeat(43);
const key = gatewayKey(mac);
const now = 1_800_000_000;

describe('gateway tickets and cookies', () => {
  const { ticket } = issueGatewayTicket(key, { agentId, gen: 2, nowSeconds: now });
  const check = (
    t: string,
    over: Partial<{ agentId: string; gen: number; nowSeconds: number }> = {},
    k = key,
  ) => checkGatewayTicket(k, { agentId, gen: 2, nowSeconds: now + 1, ...over }, t);

  it('accepts a fresh ticket for its Agent and generation, and derives the same key from the token', () => {
    expect(check(ticket)).toMatchObject({ ok: true });
    expect(gatewayKeyFromToken(`svc1.${agentId}.2.${mac}`)).toEqual({ agentId, gen: 2, key });
    expect(gatewayKeyFromToken('svc1.nope')).toBeUndefined();
  });

  it.each([
    ['expired', { nowSeconds: now + GATEWAY_TICKET_TTL_SECONDS }, 'expired'],
    ["another Agent's", { agentId: otherAgent }, 'other_agent'],
    ['an older generation', { gen: 3 }, 'old_generation'],
  ] as const)('refuses an %s ticket', (_, over, reason) => {
    expect(check(ticket, over)).toEqual({ ok: false, reason });
  });

  it('refuses a tampered ticket, one signed with another key, and garbage', () => {
    const parts = ticket.split('.');
    const later = [...parts.slice(0, 3), String(now + 9999), ...parts.slice(4)].join('.');
    expect(check(later)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check(ticket, {}, gatewayKey('b'.repeat(43)))).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(check(`${ticket}x`)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('keeps cookies and tickets apart, and cookies expire and follow the generation', () => {
    const cookie = issueGatewayCookie(key, { agentId, gen: 2, nowSeconds: now });
    const expected = { agentId, gen: 2, nowSeconds: now + 60 };
    expect(checkGatewayCookie(key, expected, cookie)).toBe(true);
    expect(checkGatewayCookie(key, { ...expected, gen: 3 }, cookie)).toBe(false);
    expect(checkGatewayCookie(key, { ...expected, nowSeconds: now + 13 * 3600 }, cookie)).toBe(
      false,
    );
    expect(checkGatewayCookie(gatewayKey('b'.repeat(43)), expected, cookie)).toBe(false);
    expect(checkGatewayCookie(key, expected, ticket)).toBe(false);
    expect(check(cookie)).toEqual({ ok: false, reason: 'malformed' });
  });
});
