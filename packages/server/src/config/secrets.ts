import { inspect } from 'node:util';
import type { GatewayCa } from '../crypto/gateway-ca.js';
import type { EncryptionKeyring } from '../crypto/token-cipher.js';

/**
 * Everything secret the service holds, kept apart from `Config` so that logging or printing the
 * configuration can never reveal a key. `inspect` and `JSON.stringify` print a placeholder.
 */
export class Secrets {
  constructor(
    readonly encryption: EncryptionKeyring,
    readonly hmacKey: Buffer,
    readonly oauthClientSecrets: Readonly<Partial<Record<'suite' | 'code' | 'music', string>>>,
    readonly s3Credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string },
    /** Hetzner Cloud's API token (`COMPUTE_DRIVER=hetzner`). */
    readonly hcloudToken?: string,
    /** The password of `SMTP_URL`, percent-encoded as the URL held it. */
    readonly smtpPassword?: string,
    /** Opens `GET /metrics` to addresses other than loopback (`Authorization: Bearer …`). */
    readonly metricsToken?: string,
    /** Stripe's API key and webhook signing secret (`BILLING_PROVIDER=stripe`). */
    readonly stripe?: { readonly secretKey: string; readonly webhookSecret: string },
    /** The authority of the TLS path to cloud machines' gateways (`gateway-ca-config.ts`). */
    readonly gatewayCa?: GatewayCa,
  ) {}

  toJSON(): string {
    return '[secrets]';
  }

  [inspect.custom](): string {
    return '[secrets]';
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

const decodeBase64 = (value: string): Buffer | undefined =>
  /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : undefined;

/**
 * Parses `ENCRYPTION_KEYS`: comma-separated `keyId:base64key` pairs, each key 32 bytes; the first
 * is the primary. Returns problems as messages that never contain key material.
 */
export function parseEncryptionKeys(raw: string): EncryptionKeyring | string {
  const keys = new Map<string, Buffer>();
  for (const [index, entry] of raw.split(',').entries()) {
    const [id = '', encoded = '', ...rest] = entry.trim().split(':');
    if (!KEY_ID.test(id) || rest.length > 0) {
      return `entry ${index + 1} must be keyId:base64key with a key id of 1-32 letters, digits, _ or -`;
    }
    const key = decodeBase64(encoded);
    if (key?.length !== 32) return `key "${id}" must be 32 bytes, base64-encoded`;
    if (keys.has(id)) return `key id "${id}" appears twice`;
    keys.set(id, key);
  }
  const primaryId = keys.keys().next().value;
  return primaryId === undefined ? 'no key given' : { primaryId, keys };
}

/** Parses `HMAC_KEY`: at least 32 bytes, base64-encoded. */
export function parseHmacKey(raw: string): Buffer | string {
  const key = decodeBase64(raw.trim());
  return key && key.length >= 32 ? key : 'must be at least 32 bytes, base64-encoded';
}
