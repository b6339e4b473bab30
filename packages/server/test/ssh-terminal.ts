import { readFileSync } from 'node:fs';
import { Client, type ClientChannel } from 'ssh2';
import { waitFor } from './wait.js';

export interface SshTerminal {
  /** Everything the terminal has shown so far, escape sequences included. */
  readonly output: () => string;
  /** Sends keystrokes, as typed (`\r` is Enter, `\x03` Ctrl-C). */
  type(keys: string): void;
  /** Resolves with the output once `pattern` matches what came after `since` (an offset). */
  waitFor(pattern: RegExp, since?: number, timeoutMs?: number): Promise<RegExpMatchArray>;
  resize(cols: number, rows: number): void;
  /** The exit status or signal the server reports when the shell ends. */
  readonly exit: Promise<{ code?: number; signal?: string }>;
  close(): void;
}

/**
 * An interactive SSH session as a person at a terminal has it: ssh2's client asks for a PTY of
 * `cols` × `rows` and a shell, logging in with the private key in `keyFile`.
 */
export function openSshTerminal(
  port: number,
  user: string,
  keyFile: string,
  size: { cols: number; rows: number },
): Promise<SshTerminal> {
  const client = new Client();
  return new Promise((resolve, reject) => {
    client.on('error', reject);
    client.on('ready', () => {
      client.shell({ term: 'xterm', ...size }, (err, channel) => {
        if (err) return reject(err);
        resolve(terminal(client, channel));
      });
    });
    client.connect({
      host: '127.0.0.1',
      port,
      username: user,
      privateKey: readFileSync(keyFile),
      readyTimeout: 20_000,
    });
  });
}

function terminal(client: Client, channel: ClientChannel): SshTerminal {
  let output = '';
  channel.on('data', (data: Buffer) => {
    output += data.toString('utf8');
  });
  const exit = new Promise<{ code?: number; signal?: string }>((resolve) => {
    channel.on('exit', (code: number | null, signal?: string) =>
      resolve(code === null ? { signal: signal as string } : { code }),
    );
    channel.on('close', () => resolve({}));
  });
  return {
    output: () => output,
    type: (keys) => channel.write(keys),
    waitFor: (pattern, since = 0, timeoutMs = 20_000) =>
      waitFor(() => output.slice(since).match(pattern) ?? undefined, timeoutMs).catch(() => {
        // What the terminal showed instead says why it did not match.
        const shown = JSON.stringify(output.slice(since).slice(-400));
        throw new Error(`timed out waiting for ${pattern} in ${shown}`);
      }),
    resize: (cols, rows) => channel.setWindow(rows, cols, 0, 0),
    exit,
    close: () => client.end(),
  };
}
