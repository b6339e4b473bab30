import { randomInt } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FirewallRule } from '@svc/contract';
import ssh2 from 'ssh2';
import { z } from 'zod';
import type { ServerLogin } from './compute-driver.js';
import type { SshAccess } from './local-ssh-server.js';

/**
 * The Plain VM flavour of a local machine: its directory holds `login.json` (who may log in),
 * `firewall.json` (the rules in force) and a host key, and its process is an SSH server on its own
 * loopback port that reads the first two afresh for every connection.
 */

const FIREWALL_FILE = 'firewall.json';
const LOGIN_FILE = 'login.json';
const HOST_KEY_FILE = 'ssh_host_ed25519_key';

export const LOOPBACK = '127.0.0.1';

/** Writes the login, the firewall and a new host key into a new Plain VM's directory. */
export async function preparePlainVm(
  dir: string,
  login: ServerLogin,
  rules: readonly FirewallRule[],
): Promise<void> {
  await writeFile(path.join(dir, LOGIN_FILE), JSON.stringify(login), { mode: 0o600 });
  await writeFirewall(dir, rules);
  const hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;
  await writeFile(path.join(dir, HOST_KEY_FILE), hostKey, { mode: 0o600 });
}

/** Replaces the rules atomically: a connection reads either the old set or the new one. */
export async function writeFirewall(dir: string, rules: readonly FirewallRule[]): Promise<void> {
  const file = path.join(dir, FIREWALL_FILE);
  await writeFile(`${file}.tmp`, JSON.stringify(rules), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}

/** The rules in force, as the SSH server reads them; `undefined` for machines without a firewall. */
export async function readFirewall(dir: string): Promise<FirewallRule[] | undefined> {
  try {
    return z
      .array(FirewallRule)
      .parse(JSON.parse(await readFile(path.join(dir, FIREWALL_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

export const readHostKey = (dir: string) => readFile(path.join(dir, HOST_KEY_FILE), 'utf8');

/** Everything the SSH server checks for one connection. */
export async function readSshAccess(dir: string, home: string): Promise<SshAccess> {
  const login = JSON.parse(await readFile(path.join(dir, LOGIN_FILE), 'utf8')) as ServerLogin;
  return {
    user: login.user,
    authorizedKeys: login.authorizedKeys,
    ...(login.passwordHash && { passwordHash: login.passwordHash }),
    home,
    ...(login.hostname && { hostname: login.hostname }),
    // No readable rule set lets nobody in, as a firewall that failed closed would.
    rules: (await readFirewall(dir)) ?? [],
  };
}

/** Where machines' ports are drawn from: below Linux's ephemeral range (32768–60999). */
const MACHINE_PORTS = { from: 20_000, to: 32_767 } as const;

/** Whether `port` can be listened on at this moment (then closed again). */
const canListen = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, LOOPBACK, () => {
      const address = server.address();
      server.close(() =>
        resolve(typeof address === 'object' && address ? address.port : undefined),
      );
    });
  });

/**
 * A loopback port nothing listens on right now, for a machine that listens on it later (and
 * again after each restart). Drawn outside the kernel's ephemeral range: a port the kernel
 * handed out would soon be the local port of some outgoing connection (a database client's),
 * and the machine could not bind it.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = MACHINE_PORTS.from + randomInt(MACHINE_PORTS.to - MACHINE_PORTS.from + 1);
    if (await canListen(port)) return port;
  }
  const any = await canListen(0);
  if (!any) throw new Error('no free loopback port');
  return any;
}

/** Whether something accepts connections on this loopback port right now. */
export const isListening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: LOOPBACK, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Whether the port is free now or within `timeoutMs`. */
export async function portFrees(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isListening(port)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Resolves once something accepts connections on the port (the VM has booted). */
export async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await isListening(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Node arguments that run the SSH server program of the machine in `dir`. */
export function sshProgramArgs(dir: string, marker: string, port: number): string[] {
  // The service runs from TypeScript sources, so the program does too, through tsx's loader.
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const program = path.join(import.meta.dirname, 'local-plain-vm.main.ts');
  return ['--import', loader, program, marker, dir, String(port)];
}
