import { execFileSync } from 'node:child_process';
import { verify } from 'unixcrypt';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildUserData, hashPasswordForShadow } from './cloud-init.js';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq0cH4mR6T9G1ZtB6D6LqGq3w3y1l0cXv5oFz0mX3uK';

describe('cloud-init user data', () => {
  it('sets the hostname and the Vault keys of the default user, with no password login', () => {
    const text = buildUserData({ hostname: 'web-1', defaultUser: 'ubuntu', authorizedKeys: [KEY] });
    expect(text.startsWith('#cloud-config\n')).toBe(true);
    const doc = parse(text);
    expect(doc).toMatchObject({ hostname: 'web-1', preserve_hostname: false, ssh_pwauth: false });
    expect(doc.users[0]).toBe('default');
    expect(doc.users[1]).toMatchObject({
      name: 'ubuntu',
      ssh_authorized_keys: [KEY],
      lock_passwd: true,
    });
    expect(doc.users[1].hashed_passwd).toBeUndefined();
    expect(doc.chpasswd).toBeUndefined();
  });

  it('enables password login with a SHA-512 crypt hash, never the password', () => {
    const hash = hashPasswordForShadow('correct horse battery');
    const text = buildUserData({
      hostname: 'db',
      defaultUser: 'root',
      authorizedKeys: [],
      passwordHash: hash,
    });
    expect(text).not.toContain('correct horse battery');
    const doc = parse(text);
    expect(doc).toMatchObject({ ssh_pwauth: true, disable_root: false });
    expect(doc.users).toEqual([
      { name: 'root', ssh_authorized_keys: [], lock_passwd: false, hashed_passwd: hash },
    ]);
    // Set once more after the users (a default user's lock would win over `lock_passwd`).
    expect(doc.chpasswd).toEqual({
      expire: false,
      users: [{ name: 'root', password: hash, type: 'hash' }],
    });
    expect(verify('correct horse battery', hash)).toBe(true);
  });

  it('hashes exactly as openssl passwd -6 does for the same salt', () => {
    const hash = hashPasswordForShadow('p@ss word');
    const salt = hash.split('$')[2] as string;
    expect(hash).toMatch(/^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
    const openssl = execFileSync('openssl', ['passwd', '-6', '-salt', salt, 'p@ss word'], {
      encoding: 'utf8',
    }).trim();
    expect(hash).toBe(openssl);
    expect(hashPasswordForShadow('p@ss word')).not.toBe(hash);
  });

  it('keeps hostile strings as data', () => {
    const doc = parse(
      buildUserData({
        hostname: 'a',
        defaultUser: 'debian',
        authorizedKeys: ['x\nruncmd: [rm -rf /]'],
      }),
    );
    expect(doc.runcmd).toBeUndefined();
    expect(doc.users[1].ssh_authorized_keys).toEqual(['x\nruncmd: [rm -rf /]']);
  });
});
