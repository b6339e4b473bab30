import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePublicKey } from './public-key.js';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `ssh-keygen -lf` on a public key file: its SHA256 fingerprint. */
const keygenFingerprint = (file: string) =>
  execFileSync('ssh-keygen', ['-lf', file], { encoding: 'utf8' }).split(' ')[1];

const wireString = (bytes: Buffer) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
};
const skLine = (type: string, fields: Buffer[]) =>
  `${type} ${Buffer.concat([wireString(Buffer.from(type)), ...fields.map(wireString)]).toString('base64')} yubikey`;

describe('OpenSSH public keys', () => {
  it.each([
    ['rsa', ['-t', 'rsa', '-b', '2048'], 'ssh-rsa'],
    ['ed25519', ['-t', 'ed25519'], 'ssh-ed25519'],
    ['ecdsa 256', ['-t', 'ecdsa', '-b', '256'], 'ecdsa-sha2-nistp256'],
    ['ecdsa 384', ['-t', 'ecdsa', '-b', '384'], 'ecdsa-sha2-nistp384'],
    ['ecdsa 521', ['-t', 'ecdsa', '-b', '521'], 'ecdsa-sha2-nistp521'],
  ])('parses %s keys made by ssh-keygen, with its fingerprint', (name, args, type) => {
    const file = path.join(dir, name.replace(' ', '-'));
    execFileSync('ssh-keygen', ['-q', ...args, '-N', '', '-C', 'me@laptop', '-f', file]);
    const result = parsePublicKey(readFileSync(`${file}.pub`, 'utf8'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.key.type).toBe(type);
    expect(result.key.comment).toBe('me@laptop');
    expect(result.key.fingerprintSha256).toBe(keygenFingerprint(`${file}.pub`));
    // The private half is refused, and its refusal does not quote it.
    const privateKey = readFileSync(file, 'utf8');
    const refused = parsePublicKey(privateKey);
    expect(refused).toEqual({ ok: false, reason: expect.stringMatching(/private key/) });
  });

  it.each([
    ['sk-ssh-ed25519@openssh.com', () => [Buffer.alloc(32, 7), Buffer.from('ssh:')]],
    [
      'sk-ecdsa-sha2-nistp256@openssh.com',
      () => {
        const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        const jwk = publicKey.export({ format: 'jwk' });
        const point = Buffer.concat([
          Buffer.from([4]),
          Buffer.from(jwk.x as string, 'base64url'),
          Buffer.from(jwk.y as string, 'base64url'),
        ]);
        return [Buffer.from('nistp256'), point, Buffer.from('ssh:')];
      },
    ],
  ])('parses %s fixture lines, with the fingerprint ssh-keygen gives', (type, fields) => {
    const line = skLine(type, fields());
    const file = path.join(dir, `${type}.pub`);
    writeFileSync(file, `${line}\n`);
    const result = parsePublicKey(line);
    expect(result.ok && result.key.type).toBe(type);
    expect(result.ok && result.key.fingerprintSha256).toBe(keygenFingerprint(file));
  });

  let reference: string | undefined;
  const ed = () => {
    if (!reference) {
      const file = path.join(dir, 'reference');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
      reference = readFileSync(`${file}.pub`, 'utf8').trim();
    }
    return reference;
  };

  it.each([
    ['an empty line', () => ''],
    ['an unsupported type', () => ed().replace('ssh-ed25519', 'ssh-dss')],
    [
      'a type that does not match the data',
      () => ed().replace('ssh-ed25519', 'ecdsa-sha2-nistp256'),
    ],
    ['truncated data', () => ed().replace(/ (\S+)/, (_, b64: string) => ` ${b64.slice(0, 40)}`)],
    ['invalid base64', () => ed().replace(/ (\S+)/, ' not*base64')],
    [
      'trailing bytes',
      () => {
        const [type, b64] = ed().split(' ');
        return `${type} ${Buffer.concat([Buffer.from(b64 as string, 'base64'), Buffer.from([0, 0, 0, 0])]).toString('base64')}`;
      },
    ],
    ['two lines', () => `${ed()}\n${ed()}`],
    [
      'a PEM private key',
      () =>
        '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
    ],
    [
      'an sk key without application',
      () => skLine('sk-ssh-ed25519@openssh.com', [Buffer.alloc(32, 1), Buffer.alloc(0)]),
    ],
    ['a short RSA key', () => skLine('ssh-rsa', [Buffer.from([1, 0, 1]), Buffer.alloc(64, 0xff)])],
  ])('refuses %s', (_, make) => {
    const result = parsePublicKey(make());
    expect(result.ok).toBe(false);
  });
});
