import { hkdfSync, randomBytes } from 'node:crypto';
import { sign, signedEqual } from '@svc/contract/gateway-ticket';

/**
 * Tickets and cookies of shared ports, made and checked by the service alone (the dashboard's
 * API issues a ticket, the edge turns it into a cookie on the port's host and checks the cookie).
 *
 * Ticket: `pt2.<agentId>.<port>.<userId>.<opener>.<expiresAtSeconds>.<nonce>.<sig>`, single use.
 * Cookie: `pc2.<agentId>.<port>.<userId>.<opener>.<expiresAtSeconds>.<sig>`.
 * `<opener>` is `s.<session id>` or `t.<token id>`: the record of the session (or personal access
 * token) that asked for the ticket, by the id the settings page shows, never its secret.
 *
 * The key is derived from the service's HMAC key for this use alone, and the gateway's tickets
 * and cookies are signed with keys derived from an Agent's token, with other prefixes: neither
 * kind ever passes as the other. A cookie says who holds it and which sign-in it came from; the
 * edge still checks, on every request, that this session or token is live (a cookie outlives
 * neither a sign-out nor a revocation), the person's current role and the port's share level.
 * Version 1 named no opener: its tickets and cookies are refused.
 */

/** How long a ticket may wait between the dashboard and the port's host. */
export const PORT_TICKET_TTL_SECONDS = 60;
/** How long a port's cookie lasts (the rights behind it are checked on each request anyway). */
export const PORT_COOKIE_TTL_SECONDS = 12 * 60 * 60;

export const portAccessKey = (hmacKey: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', hmacKey, Buffer.alloc(0), 'svc-port-access-v1', 32));

/** The session or personal access token a port was opened by, by its record's id. */
export interface PortOpener {
  readonly kind: 'session' | 'token';
  readonly id: string;
}

export interface PortClaim {
  readonly agentId: string;
  readonly port: number;
  readonly userId: string;
  readonly opener: PortOpener;
}

const UUID = '[0-9a-f-]{36}';
const TICKET = new RegExp(
  `^pt2\\.(${UUID})\\.(\\d{4,5})\\.(${UUID})\\.([st]\\.${UUID})\\.(\\d{1,12})\\.([A-Za-z0-9_-]{22})\\.([A-Za-z0-9_-]{43})$`,
);
const COOKIE = new RegExp(
  `^pc2\\.(${UUID})\\.(\\d{4,5})\\.(${UUID})\\.([st]\\.${UUID})\\.(\\d{1,12})\\.([A-Za-z0-9_-]{43})$`,
);

const openerField = (opener: PortOpener) => `${opener.kind === 'session' ? 's' : 't'}.${opener.id}`;
const openerOf = (field: string): PortOpener => ({
  kind: field.startsWith('s.') ? 'session' : 'token',
  id: field.slice(2),
});

export function issuePortTicket(
  key: Buffer,
  claim: PortClaim,
  nowSeconds: number,
): { ticket: string; expiresAtSeconds: number } {
  const expiresAtSeconds = nowSeconds + PORT_TICKET_TTL_SECONDS;
  const nonce = randomBytes(16).toString('base64url');
  const body = `pt2.${claim.agentId}.${claim.port}.${claim.userId}.${openerField(claim.opener)}.${expiresAtSeconds}.${nonce}`;
  return { ticket: `${body}.${sign(key, body)}`, expiresAtSeconds };
}

/**
 * A ticket for this Agent's port, well signed and unexpired: the user and opener it names and its
 * nonce (the caller spends the nonce); `undefined` for anything else.
 */
export function checkPortTicket(
  key: Buffer,
  expected: { agentId: string; port: number; nowSeconds: number },
  ticket: string,
): { userId: string; opener: PortOpener; nonce: string; expiresAtSeconds: number } | undefined {
  const match = TICKET.exec(ticket);
  if (!match) return undefined;
  const [, agentId, port, userId = '', opener = '', expires, nonce = '', sig = ''] = match;
  if (agentId !== expected.agentId || Number(port) !== expected.port) return undefined;
  if (!signedEqual(key, `pt2.${agentId}.${port}.${userId}.${opener}.${expires}.${nonce}`, sig)) {
    return undefined;
  }
  if (Number(expires) <= expected.nowSeconds) return undefined;
  return { userId, opener: openerOf(opener), nonce, expiresAtSeconds: Number(expires) };
}

export function issuePortCookie(key: Buffer, claim: PortClaim, nowSeconds: number): string {
  const expires = nowSeconds + PORT_COOKIE_TTL_SECONDS;
  const body = `pc2.${claim.agentId}.${claim.port}.${claim.userId}.${openerField(claim.opener)}.${expires}`;
  return `${body}.${sign(key, body)}`;
}

/**
 * The user and opener a cookie for this Agent's port names, if it is well signed and unexpired
 * (whether the opener is still live is the caller's question).
 */
export function checkPortCookie(
  key: Buffer,
  expected: { agentId: string; port: number; nowSeconds: number },
  cookie: string,
): { userId: string; opener: PortOpener } | undefined {
  const match = COOKIE.exec(cookie);
  if (!match) return undefined;
  const [, agentId, port, userId = '', opener = '', expires, sig = ''] = match;
  if (agentId !== expected.agentId || Number(port) !== expected.port) return undefined;
  if (!signedEqual(key, `pc2.${agentId}.${port}.${userId}.${opener}.${expires}`, sig)) {
    return undefined;
  }
  return Number(expires) > expected.nowSeconds ? { userId, opener: openerOf(opener) } : undefined;
}
