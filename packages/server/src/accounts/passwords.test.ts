import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './passwords.js';

const cost = { memoryKiB: 1024, passes: 1, parallelism: 1 };

describe('argon2id passwords', () => {
  it('hashes into a salted PHC string that verifies only the right password', async () => {
    const hash = await hashPassword('correct horse', cost);
    expect(hash).toMatch(
      /^\$argon2id\$v=19\$m=1024,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
    );
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
    expect(await hashPassword('correct horse', cost)).not.toBe(hash);
  });

  it('uses the default cost when none is given, and verifies with the cost stored in the hash', async () => {
    const hash = await hashPassword('pw');
    expect(hash).toContain('$m=19456,t=2,p=1$');
    expect(await verifyPassword('pw', hash)).toBe(true);
  });

  it('rejects malformed hashes instead of throwing', async () => {
    for (const bad of [
      '',
      'plain',
      '$argon2i$v=19$m=1,t=1,p=1$aaaa$bbbb',
      '$argon2id$v=19$m=x,t=1,p=1$a$b',
    ]) {
      expect(await verifyPassword('pw', bad)).toBe(false);
    }
  });
});
