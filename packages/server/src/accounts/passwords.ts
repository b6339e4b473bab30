import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const argon2Async = promisify(argon2);

/** OWASP's first argon2id recommendation: 19 MiB, 2 passes, 1 lane. */
export const ARGON2_DEFAULTS = { memoryKiB: 19_456, passes: 2, parallelism: 1 } as const;
export type Argon2Cost = { memoryKiB: number; passes: number; parallelism: number };

const TAG_LENGTH = 32;

/** Hashes with argon2id into a PHC string: `$argon2id$v=19$m=…,t=…,p=…$salt$hash`. */
export async function hashPassword(
  password: string,
  cost: Argon2Cost = ARGON2_DEFAULTS,
): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, cost);
  const params = `m=${cost.memoryKiB},t=${cost.passes},p=${cost.parallelism}`;
  return `$argon2id$v=19$${params}$${b64(salt)}$${b64(hash)}`;
}

/** Checks a password against a PHC string from `hashPassword`, in constant time. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const match =
    /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(phc);
  if (!match) return false;
  const [, m, t, p, salt, hash] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), {
    memoryKiB: Number(m),
    passes: Number(t),
    parallelism: Number(p),
  });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

function derive(password: string, salt: Buffer, cost: Argon2Cost): Promise<Buffer> {
  return argon2Async('argon2id', {
    message: password,
    nonce: salt,
    parallelism: cost.parallelism,
    tagLength: TAG_LENGTH,
    memory: cost.memoryKiB,
    passes: cost.passes,
  });
}

// PHC strings use unpadded standard base64.
const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
