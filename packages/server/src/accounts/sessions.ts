import { createHash, randomBytes } from 'node:crypto';

/** Sessions last 30 days and are extended on use once less than half of that remains. */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60_000;

/** A new opaque session id: 256 random bits, base64url. Only its hash is stored. */
export const newSessionId = () => randomBytes(32).toString('base64url');

export const hashSessionId = (sessionId: string) =>
  createHash('sha256').update(sessionId).digest('hex');
