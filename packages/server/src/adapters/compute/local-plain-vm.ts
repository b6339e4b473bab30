import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FirewallRule } from '@svc/contract';
import { z } from 'zod';
import type { ServerLogin } from './compute-driver.js';
import type { SshAccess } from './local-ssh-server.js';
import { newSshHostKey } from './ssh-host-key.js';

/**
 * The Plain VM flavour of a local machine: its directory holds `login.json` (who may log in),
 * `firewall.json` (the rules in force) and a host key, and its process is an SSH server on its own
 * loopback port that reads the first two afresh for every connection.
 */

const FIREWALL_FILE = 'firewall.json';
const LOGIN_FILE = 'login.json';
const HOST_KEY_FILE = 'ssh_host_ed25519_key';

/** Writes the login, the firewall and a new host key into a new Plain VM's directory. */
export async function preparePlainVm(
  dir: string,
  login: ServerLogin,
  rules: readonly FirewallRule[],
): Promise<void> {
  await writeFile(path.join(dir, LOGIN_FILE), JSON.stringify(login), { mode: 0o600 });
  await writeFirewall(dir, rules);
  await writeFile(path.join(dir, HOST_KEY_FILE), newSshHostKey(), { mode: 0o600 });
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

/** Node arguments that run the SSH server program of the machine in `dir`. */
export function sshProgramArgs(dir: string, marker: string, port: number): string[] {
  // The service runs from TypeScript sources, so the program does too, through tsx's loader.
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const program = path.join(import.meta.dirname, 'local-plain-vm.main.ts');
  return ['--import', loader, program, marker, dir, String(port)];
}
