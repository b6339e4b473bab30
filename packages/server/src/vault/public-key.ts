import { createHash } from 'node:crypto';
import { SshKeyType } from '@svc/contract';

export interface PublicKey {
  readonly type: SshKeyType;
  /** `type base64`, without the comment: what goes into `authorized_keys`. */
  readonly canonical: string;
  readonly comment: string;
  /** As `ssh-keygen -lf` prints it: `SHA256:` + unpadded base64 of SHA-256(blob). */
  readonly fingerprintSha256: string;
  readonly blob: Buffer;
}

export type ParseResult = { ok: true; key: PublicKey } | { ok: false; reason: string };

const CURVE_POINT_BYTES: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 };

/**
 * Parses one OpenSSH public key line (`<type> <base64> [comment]`) and checks the key blob's
 * structure for its type (RFC 4253 §6.6, RFC 5656, RFC 8709, OpenSSH PROTOCOL.u2f). The reason
 * of a failure never quotes the input, which could be a pasted private key.
 *
 * @NOTE sshpk parses the five classic types identically but not the two security-key types, so
 * one parser of the wire format serves all seven; tests compare it with `ssh-keygen -lf`.
 */
export function parsePublicKey(line: string): ParseResult {
  const text = line.trim();
  if (/PRIVATE KEY|^-----BEGIN/.test(text)) {
    return { ok: false, reason: 'This is a private key. Paste the public key (the .pub file).' };
  }
  if (text.includes('\n')) return { ok: false, reason: 'Paste exactly one key line' };
  const [type = '', encoded = '', ...rest] = text.split(/\s+/);
  if (!isKeyType(type)) return { ok: false, reason: 'Unsupported or missing key type' };
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    return { ok: false, reason: 'The key is not valid base64' };
  }
  const blob = Buffer.from(encoded, 'base64');
  const problem = checkBlob(type, blob);
  if (problem) return { ok: false, reason: problem };
  return {
    ok: true,
    key: {
      type,
      canonical: `${type} ${encoded}`,
      comment: rest.join(' '),
      fingerprintSha256: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
      blob,
    },
  };
}

function isKeyType(type: string): type is SshKeyType {
  return SshKeyType.safeParse(type).success;
}

/** Why the blob is not a well-formed key of `type`, or `undefined` when it is. */
function checkBlob(type: SshKeyType, blob: Buffer): string | undefined {
  const reader = new WireReader(blob);
  try {
    if (reader.string().toString('latin1') !== type) return 'The key data does not match its type';
    switch (type) {
      case 'ssh-rsa': {
        const exponent = reader.mpint();
        const modulus = reader.mpint();
        if (exponent.length === 0 || modulus.length * 8 < 1016)
          return 'RSA keys need at least 1024 bits';
        break;
      }
      case 'ssh-ed25519':
      case 'sk-ssh-ed25519@openssh.com':
        if (reader.string().length !== 32) return 'Malformed Ed25519 key';
        break;
      default: {
        const curve = type.replace(/^(sk-)?ecdsa-sha2-/, '').replace('@openssh.com', '');
        if (reader.string().toString('latin1') !== curve)
          return 'The curve does not match the key type';
        const point = reader.string();
        if (point.length !== CURVE_POINT_BYTES[curve] || point[0] !== 0x04)
          return 'Malformed ECDSA key';
      }
    }
    if (type.startsWith('sk-') && reader.string().length === 0)
      return 'Missing security key application';
    if (!reader.done()) return 'Unexpected data after the key';
    return undefined;
  } catch {
    return 'The key data is truncated';
  }
}

/** Reads SSH wire-format strings (uint32 length, then bytes). */
class WireReader {
  #offset = 0;
  constructor(readonly buffer: Buffer) {}

  string(): Buffer {
    if (this.#offset + 4 > this.buffer.length) throw new RangeError('truncated');
    const length = this.buffer.readUInt32BE(this.#offset);
    const start = this.#offset + 4;
    if (start + length > this.buffer.length) throw new RangeError('truncated');
    this.#offset = start + length;
    return this.buffer.subarray(start, start + length);
  }

  /** A positive mpint, without its sign byte. */
  mpint(): Buffer {
    const raw = this.string();
    return raw[0] === 0 ? raw.subarray(1) : raw;
  }

  done(): boolean {
    return this.#offset === this.buffer.length;
  }
}
