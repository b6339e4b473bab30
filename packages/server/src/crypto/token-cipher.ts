import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { secretKey } from '../util/secret-key.js';

/** AES-256-GCM keys by id; `primaryId` seals, every key opens (`ENCRYPTION_KEYS`, config/secrets.ts). */
export interface EncryptionKeyring {
  readonly primaryId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

/**
 * Seals OAuth tokens at rest: AES-256-GCM, a fresh 96-bit IV each time, and the additional
 * authenticated data bound to the connection and OAuth provider, so a ciphertext copied to another row
 * does not open. Envelope: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url), so keys can rotate:
 * sealing uses the primary key, opening uses whichever key the envelope names.
 */
export interface TokenBinding {
  readonly connectionId: string;
  readonly provider: string;
}

const VERSION = 'v1';
const IV_BYTES = 12;

const aad = (binding: TokenBinding) =>
  Buffer.from(`${binding.connectionId}|${binding.provider}`, 'utf8');

export class TokenCipher {
  constructor(private readonly keyring: EncryptionKeyring) {}

  seal(plaintext: string, binding: TokenBinding): string {
    const keyId = this.keyring.primaryId;
    const key = secretKey(this.keyring.keys.get(keyId)!);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(binding));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return [VERSION, keyId, ...parts].join('.');
  }

  /** Throws on an unknown key, a tampered envelope or the wrong binding; never says more. */
  open(envelope: string, binding: TokenBinding): string {
    const [version, keyId = '', iv = '', tag = '', ciphertext = '', ...rest] = envelope.split('.');
    const raw = this.keyring.keys.get(keyId);
    if (version !== VERSION || rest.length > 0 || !raw) throw new TokenCipherError();
    const key = secretKey(raw);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(binding));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plain = Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]);
      return plain.toString('utf8');
    } catch {
      throw new TokenCipherError();
    }
  }

  /** True when the envelope is sealed with a key other than the primary. */
  needsResealing(envelope: string): boolean {
    return envelope.split('.')[1] !== this.keyring.primaryId;
  }
}

export class TokenCipherError extends Error {
  override name = 'TokenCipherError';
  constructor() {
    super('token envelope does not open with the configured keys');
  }
}
