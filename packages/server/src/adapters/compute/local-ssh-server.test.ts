import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FirewallRule } from '@svc/contract';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { Client, utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair as makeKeyPair, ssh as openssh } from '../../../test/openssh.js';
import { createLogger } from '../../logger.js';
import { hashPasswordForShadow } from '../../plain-vms/cloud-init.js';
import { startSshServer } from './local-ssh-server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-ssh-'));
const home = mkdtempSync(path.join(tmpdir(), 'svc-ssh-home-'));

const keyPair = (name: string) => makeKeyPair(dir, name);
const ssh = (port: number, keyFile: string, command: string) =>
  openssh(port, 'ubuntu', keyFile, command);

describe('local Plain VM SSH server', () => {
  let rules: readonly FirewallRule[] = DEFAULT_FIREWALL_RULES;
  let server: Awaited<ReturnType<typeof startSshServer>>;
  let allowed: Awaited<ReturnType<typeof keyPair>>;
  let other: Awaited<ReturnType<typeof keyPair>>;

  beforeAll(async () => {
    allowed = await keyPair('allowed');
    other = await keyPair('other');
    const hostKey = utils.generateKeyPairSync('ed25519').private;
    server = await startSshServer({
      hostKey,
      log: createLogger({ logLevel: 'silent' }),
      access: () => ({
        user: 'ubuntu',
        authorizedKeys: [allowed.publicLine],
        passwordHash: hashPasswordForShadow('one-time'),
        home,
        rules,
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('lets the default user in with a chosen Vault key and runs a real shell in the home', async () => {
    expect(await ssh(server.port, allowed.file, 'echo ok')).toEqual({ code: 0, stdout: 'ok\n' });
    const where = await ssh(server.port, allowed.file, 'echo $HOME; pwd; exit 3');
    expect(where).toEqual({ code: 3, stdout: `${home}\n${home}\n` });
  });

  it('refuses a key that was not chosen', async () => {
    const res = await ssh(server.port, other.file, 'echo ok');
    expect(res.code).toBe(255);
    expect(res.stdout).toBe('');
  });

  it('refuses connections the firewall does not allow, as soon as the rules change', async () => {
    rules = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '22',
        sourceIps: ['203.0.113.0/24'],
        description: 'office',
      },
    ];
    expect((await ssh(server.port, allowed.file, 'echo ok')).code).toBe(255);
    rules = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '20-30',
        sourceIps: ['127.0.0.1/32'],
        description: '',
      },
    ];
    expect(await ssh(server.port, allowed.file, 'echo ok')).toEqual({ code: 0, stdout: 'ok\n' });
    rules = DEFAULT_FIREWALL_RULES;
  });

  it('accepts the one-time password when it is enabled, and nothing else', async () => {
    const login = (password: string) =>
      new Promise<boolean>((resolve) => {
        const client = new Client();
        client.on('ready', () => {
          client.end();
          resolve(true);
        });
        client.on('error', () => resolve(false));
        client.connect({
          host: '127.0.0.1',
          port: server.port,
          username: 'ubuntu',
          password,
          tryKeyboard: false,
        });
      });
    expect(await login('one-time')).toBe(true);
    expect(await login('one-time!')).toBe(false);
  });
});
