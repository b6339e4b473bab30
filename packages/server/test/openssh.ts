import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A new ed25519 key pair made by `ssh-keygen` in `dir`: the private key file and the public line. */
export async function keyPair(dir: string, name: string) {
  const file = path.join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file, '-C', name]);
  return { file, publicLine: readFileSync(`${file}.pub`, 'utf8').trim() };
}

/**
 * The OpenSSH client, as a user would run it; resolves with its exit code and output. `host` is
 * loopback for the local driver, a machine's bridge address for Incus; with `netns`, the client
 * runs in that network namespace (an outside client a test made).
 */
export const ssh = (
  port: number,
  user: string,
  keyFile: string,
  command: string,
  host = '127.0.0.1',
  netns?: string,
) =>
  run(
    netns ? 'ip' : 'ssh',
    [
      ...(netns ? ['netns', 'exec', netns, 'ssh'] : []),
      '-i',
      keyFile,
      '-p',
      String(port),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'ConnectTimeout=5',
      // A firewall change that lands mid-session drops its packets: without these the client
      // waits forever on a connection that will never answer again.
      '-o',
      'ServerAliveInterval=5',
      '-o',
      'ServerAliveCountMax=2',
      '-o',
      'LogLevel=ERROR',
      `${user}@${host}`,
      command,
    ],
    { timeout: 60_000 },
  ).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
