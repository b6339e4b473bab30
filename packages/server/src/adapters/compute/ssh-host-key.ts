import ssh2 from 'ssh2';

/**
 * A new ed25519 host key in OpenSSH's format. ssh2's generator strips every leading zero byte of
 * the public key, so about one key in 256 comes out malformed and its own parser (and the SSH
 * server built on it) rejects it; a key that does not parse back is drawn again.
 */
export function newSshHostKey(): string {
  for (;;) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519');
    const parsed = [ssh2.utils.parseKey(pair.private), ssh2.utils.parseKey(pair.public)];
    if (parsed.every((key) => !(key instanceof Error))) return pair.private;
  }
}
