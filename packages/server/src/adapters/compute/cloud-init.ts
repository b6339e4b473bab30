import { randomBytes } from 'node:crypto';
import { encrypt } from 'unixcrypt';
import { stringify } from 'yaml';

export interface UserDataInput {
  readonly hostname: string;
  /** The OS image's default user (`ubuntu`, `debian` or `root`). */
  readonly defaultUser: string;
  /** `type base64` lines of the Vault keys chosen at creation. */
  readonly authorizedKeys: readonly string[];
  /** The one-time password's crypt(3) hash, when password login is enabled. */
  readonly passwordHash?: string;
}

const SALT_ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** SHA-512 crypt (`$6$…`), the hash cloud-init and /etc/shadow take; the password itself never leaves. */
export function hashPasswordForShadow(password: string): string {
  const salt = Array.from(randomBytes(16), (byte) => SALT_ALPHABET[byte % 64]).join('');
  return encrypt(password, `$6$${salt}`);
}

/**
 * The cloud-init user data that makes a cloud VM what the Plain VM promises: its hostname, the
 * chosen Vault keys for the default user, and password login only when enabled.
 */
export function buildUserData(input: UserDataInput): string {
  const isRoot = input.defaultUser === 'root';
  const user: Record<string, unknown> = {
    name: input.defaultUser,
    ssh_authorized_keys: [...input.authorizedKeys],
    lock_passwd: input.passwordHash === undefined,
    ...(input.passwordHash && { hashed_passwd: input.passwordHash }),
    ...(!isRoot && { sudo: 'ALL=(ALL) NOPASSWD:ALL', shell: '/bin/bash', groups: ['sudo'] }),
  };
  const document = {
    hostname: input.hostname,
    preserve_hostname: false,
    ...(isRoot ? { disable_root: false } : {}),
    users: isRoot ? [user] : ['default', user],
    ssh_pwauth: input.passwordHash !== undefined,
    // The password again, set after the users: cloud-init merges the entry above into the
    // distribution's default user of the same name, whose `lock_passwd: true` wins and locks it.
    ...(input.passwordHash && {
      chpasswd: {
        expire: false,
        users: [{ name: input.defaultUser, password: input.passwordHash, type: 'hash' }],
      },
    }),
  };
  return `#cloud-config\n${stringify(document)}`;
}
