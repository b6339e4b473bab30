import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { agentOf, localhostLookup, localRequest } from './localhost-http.js';

/**
 * A browser's cookie for an Agent's gateway at `base` (any URL of it: its address, or its URL
 * through the edge proxy): the ticket of a one-time link from the service, redeemed there.
 */
export async function gatewayCookie(base: string, link: string): Promise<string> {
  const ticket = new URL(link).searchParams.get('ticket') as string;
  const url = new URL('/_svc/open', base);
  url.searchParams.set('ticket', ticket);
  const res = await localRequest(url.toString());
  const cookie = [res.headers['set-cookie'] ?? []].flat()[0]?.split(';')[0];
  if (res.status !== 302 || !cookie) {
    throw new Error(`the gateway at ${base} did not take the ticket: ${res.status} ${res.body}`);
  }
  return cookie;
}

export interface Terminal {
  /** Runs one shell command; answers what it printed (stdout and stderr) and its exit code. */
  run(command: string, timeoutMs?: number): Promise<{ output: string; code: number }>;
  close(): void;
}

/** The gateway's terminal (a shell on the machine, as the browser's terminal page opens it). */
export function openTerminal(base: string, cookie: string): Promise<Terminal> {
  const origin = new URL(base).origin;
  const url = new URL('/_svc/terminal/ws?cols=200&rows=50', base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const agent = agentOf(base);
  const ws = new WebSocket(url, {
    headers: { cookie, origin },
    lookup: localhostLookup,
    ...(agent && { agent }),
  });
  let screen = '';
  ws.on('message', (data) => {
    screen += String(data);
  });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        async run(command, timeoutMs = 20_000) {
          // Markers the shell prints around the output, built so its echo of the typed line
          // does not contain them.
          const mark = randomBytes(6).toString('hex');
          const from = screen.length;
          ws.send(
            JSON.stringify({
              t: 'i',
              d: `echo "<${mark}"'>'; ${command}; echo "<${mark}:$?"'>'\r`,
            }),
          );
          const done = new RegExp(`<${mark}>\\r?\\n([\\s\\S]*?)<${mark}:(\\d+)>`);
          const started = Date.now();
          for (;;) {
            const found = done.exec(screen.slice(from));
            if (found) {
              return { output: (found[1] ?? '').replace(/\r/g, ''), code: Number(found[2]) };
            }
            if (Date.now() - started > timeoutMs) {
              throw new Error(`no end of "${command}" in the terminal: ${screen.slice(from)}`);
            }
            await new Promise((r) => setTimeout(r, 50));
          }
        },
        close: () => ws.close(),
      }),
    );
  });
}
