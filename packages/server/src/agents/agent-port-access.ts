import { hkdfSync, randomBytes } from 'node:crypto';
import { sign, signedEqual } from '@svc/contract/gateway-ticket';

/**
 * Tickets and cookies of shared ports, made and checked by the service alone (the dashboard's
 * API issues a ticket, the edge turns it into a cookie on the port's host and checks the cookie).
 *
 * Ticket: `pt1.<agentId>.<port>.<userId>.<expiresAtSeconds>.<nonce>.<sig>`, single use.
 * Cookie: `pc1.<agentId>.<port>.<userId>.<expiresAtSeconds>.<sig>`.
 *
 * The key is derived from the service's HMAC key for this use alone, and the gateway's tickets
 * and cookies are signed with keys derived from an Agent's token, with other prefixes: neither
 * kind ever passes as the other. A cookie says who holds it; the edge still checks that person's
 * current role and the port's current share level on every request.
 */

/** How long a ticket may wait between the dashboard and the port's host. */
export const PORT_TICKET_TTL_SECONDS = 60;
/** How long a port's cookie lasts (the rights behind it are checked on each request anyway). */
export const PORT_COOKIE_TTL_SECONDS = 12 * 60 * 60;

export const portAccessKey = (hmacKey: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', hmacKey, Buffer.alloc(0), 'svc-port-access-v1', 32));

export interface PortClaim {
  readonly agentId: string;
  readonly port: number;
  readonly userId: string;
}

const UUID = '[0-9a-f-]{36}';
const TICKET = new RegExp(
  `^pt1\\.(${UUID})\\.(\\d{4,5})\\.(${UUID})\\.(\\d{1,12})\\.([A-Za-z0-9_-]{22})\\.([A-Za-z0-9_-]{43})$`,
);
const COOKIE = new RegExp(
  `^pc1\\.(${UUID})\\.(\\d{4,5})\\.(${UUID})\\.(\\d{1,12})\\.([A-Za-z0-9_-]{43})$`,
);

export function issuePortTicket(
  key: Buffer,
  claim: PortClaim,
  nowSeconds: number,
): { ticket: string; expiresAtSeconds: number } {
  const expiresAtSeconds = nowSeconds + PORT_TICKET_TTL_SECONDS;
  const nonce = randomBytes(16).toString('base64url');
  const body = `pt1.${claim.agentId}.${claim.port}.${claim.userId}.${expiresAtSeconds}.${nonce}`;
  return { ticket: `${body}.${sign(key, body)}`, expiresAtSeconds };
}

/**
 * A ticket for this Agent's port, well signed and unexpired: the user it names and its nonce (the
 * caller spends the nonce); `undefined` for anything else.
 */
export function checkPortTicket(
  key: Buffer,
  expected: { agentId: string; port: number; nowSeconds: number },
  ticket: string,
): { userId: string; nonce: string; expiresAtSeconds: number } | undefined {
  const match = TICKET.exec(ticket);
  if (!match) return undefined;
  const [, agentId, port, userId = '', expires, nonce = '', sig = ''] = match;
  if (agentId !== expected.agentId || Number(port) !== expected.port) return undefined;
  if (!signedEqual(key, `pt1.${agentId}.${port}.${userId}.${expires}.${nonce}`, sig)) {
    return undefined;
  }
  if (Number(expires) <= expected.nowSeconds) return undefined;
  return { userId, nonce, expiresAtSeconds: Number(expires) };
}

export function issuePortCookie(key: Buffer, claim: PortClaim, nowSeconds: number): string {
  const expires = nowSeconds + PORT_COOKIE_TTL_SECONDS;
  const body = `pc1.${claim.agentId}.${claim.port}.${claim.userId}.${expires}`;
  return `${body}.${sign(key, body)}`;
}

/** The user a cookie for this Agent's port names, if it is well signed and unexpired. */
export function checkPortCookie(
  key: Buffer,
  expected: { agentId: string; port: number; nowSeconds: number },
  cookie: string,
): string | undefined {
  const match = COOKIE.exec(cookie);
  if (!match) return undefined;
  const [, agentId, port, userId = '', expires, sig = ''] = match;
  if (agentId !== expected.agentId || Number(port) !== expected.port) return undefined;
  if (!signedEqual(key, `pc1.${agentId}.${port}.${userId}.${expires}`, sig)) return undefined;
  return Number(expires) > expected.nowSeconds ? userId : undefined;
}
