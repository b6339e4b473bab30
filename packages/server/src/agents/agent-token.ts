import { createHmac, timingSafeEqual } from 'node:crypto';
import { gatewayKey } from '@svc/contract/gateway-ticket';
import { secretKey } from '../util/secret-key.js';

/**
 * An Agent's credential: `svc1.<agentId>.<gen>.<mac>`, mac = base64url(HMAC-SHA256(key,
 * "svc1.<agentId>.<gen>")). Nothing secret is stored: the server recomputes the mac and checks
 * `gen` against the Agent's current generation (bumped to revoke).
 */
export function issueAgentToken(key: Buffer, agentId: string, gen: number): string {
  const body = `svc1.${agentId}.${gen}`;
  return `${body}.${mac(key, body)}`;
}

/** The Agent id and generation a well-signed token names, or `undefined`. Constant-time compare. */
export function readAgentToken(
  key: Buffer,
  token: string,
): { agentId: string; gen: number } | undefined {
  const match = /^svc1\.([0-9a-f-]{36})\.(\d{1,9})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, agentId = '', gen = '', given = ''] = match;
  const expected = Buffer.from(mac(key, `svc1.${agentId}.${gen}`));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  return { agentId, gen: Number(gen) };
}

/**
 * An Agent in this state no longer speaks with its token: its destruction has begun. (A
 * destroyed Agent's row is gone, so its token finds nothing.)
 */
export const SILENT_AGENT_STATE = 'destroying';

const mac = (key: Buffer, body: string) =>
  createHmac('sha256', secretKey(key)).update(body).digest('base64url');

/** The key of the Agent's gateway tickets and cookies for this token generation (`gatewayKey`). */
export function agentGatewayKey(key: Buffer, agentId: string, gen: number): Buffer {
  return gatewayKey(mac(key, `svc1.${agentId}.${gen}`));
}
