import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FirewallRule } from '@svc/contract';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { Client, type ClientChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair as makeKeyPair, ssh as openssh } from '../../../test/openssh.js';
import { createLogger } from '../../logger.js';
import { hashPasswordForShadow } from './cloud-init.js';
import { SSH_LOGIN_BACKOFF, startSshServer } from './local-ssh-server.js';
import { newSshHostKey } from './ssh-host-key.js';

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
    const hostKey = newSshHostKey();
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
    expect(await passwordLogin(server.port, 'one-time')).toBe(true);
    expect(await passwordLogin(server.port, 'one-time!')).toBe(false);
  });
});

describe('local Plain VM SSH server: sessions', () => {
  let server: Awaited<ReturnType<typeof startSshServer>>;
  let home: string;

  beforeAll(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'svc-ssh-home-'));
    server = await startSshServer({
      hostKey: newSshHostKey(),
      log: createLogger({ logLevel: 'silent' }),
      access: () => ({
        user: 'debian',
        authorizedKeys: [],
        passwordHash: hashPasswordForShadow('one-time'),
        home,
        rules: DEFAULT_FIREWALL_RULES,
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('gives a command a terminal only when the client asks for one', async () => {
    const withTerminal = await session(server.port, (client, done) =>
      client.exec(
        'tty; stty size; echo "$TERM $USER"',
        { pty: { term: 'vt220', cols: 90, rows: 20 } },
        done,
      ),
    );
    expect(withTerminal.stdout).toMatch(/^\/dev\/pts\/\d+\r\n20 90\r\nvt220 debian\r\n$/);
    expect(withTerminal.exit).toEqual({ code: 0 });
    const withPipes = await session(server.port, (client, done) =>
      client.exec('tty; echo "$USER"', done),
    );
    expect(withPipes).toEqual({ stdout: 'not a tty\ndebian\n', exit: { code: 0 } });
  });

  it('runs a shell without a terminal through pipes, without prompts', async () => {
    const res = await session(server.port, (client, done) =>
      client.shell(false, (err, channel) => {
        done(err, channel);
        channel?.end('echo "$HOME"; pwd\nexit 4\n');
      }),
    );
    expect(res).toEqual({ stdout: `${home}\n${home}\n`, exit: { code: 4 } });
  });

  it('passes a signal from the client on to the command, with or without a terminal', async () => {
    for (const pty of [false, { term: 'xterm', cols: 80, rows: 24 }]) {
      const res = await session(server.port, (client, done) =>
        client.exec('echo started; exec sleep 100', { pty }, (err, channel) => {
          done(err, channel);
          channel?.once('data', () => channel.signal('TERM'));
        }),
      );
      expect(res).toEqual({
        stdout: pty ? 'started\r\n' : 'started\n',
        exit: { signal: 'SIGTERM' },
      });
    }
  });
});

describe('local Plain VM SSH server: failed logins', () => {
  let nowMs = Date.now();
  let server: Awaited<ReturnType<typeof startSshServer>>;

  beforeAll(async () => {
    server = await startSshServer({
      hostKey: newSshHostKey(),
      log: createLogger({ logLevel: 'silent' }),
      now: () => nowMs,
      access: () => ({
        user: 'ubuntu',
        authorizedKeys: [],
        passwordHash: hashPasswordForShadow('one-time'),
        home,
        rules: DEFAULT_FIREWALL_RULES,
      }),
    });
  });
  afterAll(() => server?.close());

  it('slows down one source address with growing waits, and leaves other addresses alone', async () => {
    const { free, baseDelayMs } = SSH_LOGIN_BACKOFF;
    for (let i = 0; i < free; i++) expect(await passwordLogin(server.port, 'guess')).toBe(false);
    // Even the right password waits now: the address has used its free failures.
    expect(await passwordLogin(server.port, 'one-time')).toBe(false);
    // Another address (loopback reaches the server from any 127/8 source) is not slowed down.
    expect(await passwordLogin(server.port, 'one-time', '127.0.0.2')).toBe(true);

    nowMs += baseDelayMs;
    expect(await passwordLogin(server.port, 'guess')).toBe(false);
    // The next wait is twice as long.
    nowMs += baseDelayMs;
    expect(await passwordLogin(server.port, 'one-time')).toBe(false);
    nowMs += baseDelayMs;
    expect(await passwordLogin(server.port, 'one-time')).toBe(true);
  });
});

/** Whether a password login as `ubuntu` succeeds, from `localAddress` (default 127.0.0.1). */
function passwordLogin(port: number, password: string, localAddress?: string) {
  return new Promise<boolean>((resolve) => {
    const client = new Client();
    client.on('ready', () => {
      client.end();
      resolve(true);
    });
    // A refused connection may end without an error; a promise keeps its first answer.
    client.on('error', () => resolve(false));
    client.on('close', () => resolve(false));
    client.connect({
      host: '127.0.0.1',
      port,
      username: 'ubuntu',
      password,
      tryKeyboard: false,
      ...(localAddress && { localAddress }),
    });
  });
}

/**
 * Logs in as `debian` with the password, opens one session with `open` and resolves with what it
 * printed and how it ended.
 */
function session(
  port: number,
  open: (client: Client, done: (err: Error | undefined, channel?: ClientChannel) => void) => void,
) {
  return new Promise<{ stdout: string; exit: { code?: number; signal?: string } }>(
    (resolve, reject) => {
      const client = new Client();
      client.on('error', reject);
      client.on('ready', () =>
        open(client, (err, channel) => {
          if (err || !channel) return reject(err);
          let stdout = '';
          let exit: { code?: number; signal?: string } = {};
          channel.on('data', (data: Buffer) => {
            stdout += data.toString();
          });
          channel.on('exit', (code: number | null, signal?: string) => {
            exit = code === null ? { signal: signal as string } : { code };
          });
          channel.on('close', () => {
            client.end();
            resolve({ stdout, exit });
          });
        }),
      );
      client.connect({
        host: '127.0.0.1',
        port,
        username: 'debian',
        password: 'one-time',
        tryKeyboard: false,
      });
    },
  );
}
