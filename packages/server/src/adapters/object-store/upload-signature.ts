import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The fs store's upload URLs are signed with a key of their own, derived from the service's HMAC
 * key with HKDF: an upload signature and an Agent token can never be swapped for one another.
 */
export function deriveUploadKey(hmacKey: Buffer): Buffer {
  return Buffer.from(
    hkdfSync('sha256', hmacKey, Buffer.alloc(0), 'svc object-store upload v1', 32),
  );
}

export interface SignedUpload {
  readonly uploadId: string;
  readonly sha256: string;
  readonly size: number;
  /** Unix seconds. */
  readonly expiresAt: number;
}

const payload = (u: SignedUpload) =>
  ['PUT', u.uploadId, u.sha256, String(u.size), String(u.expiresAt)].join('\n');

export function signUpload(key: Buffer, upload: SignedUpload): string {
  return createHmac('sha256', key).update(payload(upload)).digest('base64url');
}

/** Constant-time check of a signature against every signed field. */
export function verifyUploadSignature(
  key: Buffer,
  upload: SignedUpload,
  signature: string,
): boolean {
  const expected = Buffer.from(signUpload(key, upload));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
