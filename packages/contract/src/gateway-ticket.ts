import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Tickets and cookies of an Agent's gateway (`svc gateway`), checked on the VM without a database.
 *
 * Both sides derive the signing key from the Agent's HMAC token: the service can recompute the
 * token's mac from its own key, and the VM holds the token. A new token generation (destroy,
 * transfer, regenerate) is a new key, so every older ticket and cookie stops working.
 *
 * Ticket: `gt1.<agentId>.<gen>.<expiresAtSeconds>.<nonce>.<sig>`, single use, short-lived.
 * Cookie: `gc1.<agentId>.<gen>.<expiresAtSeconds>.<sig>`, set by the gateway for its own origin.
 * Different prefixes are signed, so a ticket never passes as a cookie or the reverse.
 *
 * Lives outside the package's index: it needs `node:crypto`, and the dashboard never signs.
 */

/** How long a ticket may wait between the dashboard and the gateway. */
export const GATEWAY_TICKET_TTL_SECONDS = 60;
/** How long the gateway's own cookie lasts. */
export const GATEWAY_COOKIE_TTL_SECONDS = 12 * 60 * 60;
export const GATEWAY_COOKIE = 'svc_gateway';
/** Paths of the gateway itself; everything else is left for the user's own sites. */
export const GATEWAY_PREFIX = '/_svc';

/** The key both sides derive from the token's mac (the part after the last dot). */
export function gatewayKey(tokenMac: string): Buffer {
  return createHmac('sha256', Buffer.from(tokenMac, 'base64url')).update('svc-gateway-v1').digest();
}

/** The key from a whole `svc1.<id>.<gen>.<mac>` token, with the id and generation it names. */
export function gatewayKeyFromToken(token: string) {
  const match = /^svc1\.([0-9a-f-]{36})\.(\d{1,9})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, agentId = '', gen = '', mac = ''] = match;
  return { agentId, gen: Number(gen), key: gatewayKey(mac) };
}

/** `body`'s HMAC-SHA256 under `key`, base64url: the signature of every ticket and cookie. */
export const sign = (key: Buffer, body: string) =>
  createHmac('sha256', key).update(body).digest('base64url');

/** Whether `given` is `body`'s signature under `key`, compared in constant time. */
export function signedEqual(key: Buffer, body: string, given: string): boolean {
  const expected = Buffer.from(sign(key, body));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export function issueGatewayTicket(
  key: Buffer,
  claim: { agentId: string; gen: number; nowSeconds: number },
): { ticket: string; expiresAtSeconds: number } {
  const expiresAtSeconds = claim.nowSeconds + GATEWAY_TICKET_TTL_SECONDS;
  const nonce = randomBytes(16).toString('base64url');
  const body = `gt1.${claim.agentId}.${claim.gen}.${expiresAtSeconds}.${nonce}`;
  return { ticket: `${body}.${sign(key, body)}`, expiresAtSeconds };
}

export type TicketCheck =
  | { ok: true; nonce: string; expiresAtSeconds: number }
  | {
      ok: false;
      reason: 'malformed' | 'other_agent' | 'old_generation' | 'bad_signature' | 'expired';
    };

/** Checks a ticket for this Agent and generation; the caller also refuses a reused nonce. */
export function checkGatewayTicket(
  key: Buffer,
  expected: { agentId: string; gen: number; nowSeconds: number },
  ticket: string,
): TicketCheck {
  const match =
    /^gt1\.([0-9a-f-]{36})\.(\d{1,9})\.(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(
      ticket,
    );
  if (!match) return { ok: false, reason: 'malformed' };
  const [, agentId, gen, expires, nonce = '', sig = ''] = match;
  if (agentId !== expected.agentId) return { ok: false, reason: 'other_agent' };
  if (Number(gen) !== expected.gen) return { ok: false, reason: 'old_generation' };
  if (!signedEqual(key, `gt1.${agentId}.${gen}.${expires}.${nonce}`, sig)) {
    return { ok: false, reason: 'bad_signature' };
  }
  if (Number(expires) <= expected.nowSeconds) return { ok: false, reason: 'expired' };
  return { ok: true, nonce, expiresAtSeconds: Number(expires) };
}

export function issueGatewayCookie(
  key: Buffer,
  claim: { agentId: string; gen: number; nowSeconds: number },
): string {
  const body = `gc1.${claim.agentId}.${claim.gen}.${claim.nowSeconds + GATEWAY_COOKIE_TTL_SECONDS}`;
  return `${body}.${sign(key, body)}`;
}

export function checkGatewayCookie(
  key: Buffer,
  expected: { agentId: string; gen: number; nowSeconds: number },
  cookie: string,
): boolean {
  const match = /^gc1\.([0-9a-f-]{36})\.(\d{1,9})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
  if (!match) return false;
  const [, agentId, gen, expires, sig = ''] = match;
  return (
    agentId === expected.agentId &&
    Number(gen) === expected.gen &&
    signedEqual(key, `gc1.${agentId}.${gen}.${expires}`, sig) &&
    Number(expires) > expected.nowSeconds
  );
}

/**
 * Every value of the cookie `name` in a `Cookie` header: one planted by a sibling subdomain
 * must not shadow the real one, so each is checked.
 */
export function readCookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) values.push(rest.join('='));
  }
  return values;
}
