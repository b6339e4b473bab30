import { describe, expect, it } from 'vitest';
import { TokenCipher, TokenCipherError } from './token-cipher.js';

const key = (fill: number) => Buffer.alloc(32, fill);
const ring = (...ids: [string, number][]) => ({
  primaryId: ids[0]![0],
  keys: new Map(ids.map(([id, fill]) => [id, key(fill)])),
});
const binding = { connectionId: '5b0c7a4e-0000-4000-8000-000000000001', provider: 'suite' };

describe('TokenCipher', () => {
  const cipher = new TokenCipher(ring(['k1', 1]));

  it('round-trips, with a fresh IV each time and the key id in the envelope', () => {
    const a = cipher.seal('ya29.secret-token', binding);
    const b = cipher.seal('ya29.secret-token', binding);
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret-token');
    const [version, keyId, iv] = a.split('.');
    expect([version, keyId]).toEqual(['v1', 'k1']);
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(cipher.open(a, binding)).toBe('ya29.secret-token');
  });

  it('refuses a flipped byte anywhere in the envelope', () => {
    const sealed = cipher.seal('token', binding);
    const parts = sealed.split('.');
    for (const index of [2, 3, 4]) {
      const bytes = Buffer.from(parts[index]!, 'base64url');
      bytes[0]! ^= 1;
      const tampered = [...parts];
      tampered[index] = bytes.toString('base64url');
      expect(() => cipher.open(tampered.join('.'), binding)).toThrow(TokenCipherError);
    }
  });

  it('refuses a ciphertext moved to another connection or provider (AAD)', () => {
    const sealed = cipher.seal('token', binding);
    expect(() =>
      cipher.open(sealed, { ...binding, connectionId: '5b0c7a4e-0000-4000-8000-000000000002' }),
    ).toThrow(TokenCipherError);
    expect(() => cipher.open(sealed, { ...binding, provider: 'music' })).toThrow(TokenCipherError);
  });

  it('rotates: opens with any configured key, seals with the first; unknown keys fail', () => {
    const old = new TokenCipher(ring(['k1', 1]));
    const rotated = new TokenCipher(ring(['k2', 2], ['k1', 1]));
    const sealedOld = old.seal('token', binding);
    expect(rotated.open(sealedOld, binding)).toBe('token');
    expect(rotated.needsResealing(sealedOld)).toBe(true);
    const sealedNew = rotated.seal('token', binding);
    expect(sealedNew.split('.')[1]).toBe('k2');
    expect(rotated.needsResealing(sealedNew)).toBe(false);
    expect(() => old.open(sealedNew, binding)).toThrow(TokenCipherError);
    // Same id, different key: the tag does not verify.
    expect(() => new TokenCipher(ring(['k1', 9])).open(sealedOld, binding)).toThrow(
      TokenCipherError,
    );
  });

  it('never puts the plaintext or the envelope in its error', () => {
    const secret = 'ya29.a-real-looking-secret-token';
    const sealed = cipher.seal(secret, binding);
    const [version, keyId, iv, tag, ciphertext] = sealed.split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    // A flipped tag fails authentication after the ciphertext has been read.
    const badTag = Buffer.from(tag, 'base64url');
    badTag[0]! ^= 1;
    const tampered = [version, keyId, iv, badTag.toString('base64url'), ciphertext].join('.');
    for (const envelope of [tampered, 'v1.k1.AAAA.BBBB.CCCC']) {
      let caught: unknown;
      expect(() => {
        try {
          cipher.open(envelope, binding);
        } catch (error) {
          caught = error;
          throw error;
        }
      }).toThrow(TokenCipherError);
      const text = `${String(caught)} ${(caught as Error).stack ?? ''}`;
      for (const part of [secret, iv, tag, ciphertext, 'AAAA', 'BBBB', 'CCCC'])
        expect(text).not.toContain(part);
    }
  });
});
