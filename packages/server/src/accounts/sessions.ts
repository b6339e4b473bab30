import { createHash, randomBytes } from 'node:crypto';

/** Sessions last 30 days and are extended on use once less than half of that remains. */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60_000;

/**
 * A new opaque secret: 256 random bits, base64url. Sessions, e-mail links, invitations and
 * personal access tokens are such secrets; only their hash is stored.
 */
export const newSecret = () => randomBytes(32).toString('base64url');

/** SHA-256, hex: enough for a 256-bit random secret (no dictionary to try). */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export const newSessionId = newSecret;
export const hashSessionId = hashSecret;
