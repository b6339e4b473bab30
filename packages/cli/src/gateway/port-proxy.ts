import { readFile } from 'node:fs/promises';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { createConnection, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { PORT_COOKIE, PORT_HEADER, PORT_MAX, PORT_MIN } from '@svc/contract';
import { GATEWAY_COOKIE } from '@svc/contract/gateway-ticket';

/**
 * Shared ports, the gateway's part: the edge has already decided who may reach a port and says
 * which in `x-svc-port` (it deletes any copy a client sent; on a cloud machine only the
 * service's client certificate reaches the gateway at all), so the gateway hands such a request
 * to the port inside the machine without a cookie check of its own. Also: which ports are
 * listening, read from the kernel's tables, for the dashboard's list.
 */

/** TCP state LISTEN in `/proc/net/tcp{,6}`. */
const LISTEN = '0A';
/** Addresses a server on them is reachable at from the gateway: loopback or every address. */
const REACHABLE_V4 = /^(00000000|[0-9A-F]{6}7F)$/i;
const REACHABLE_V6 = new Set([
  '00000000000000000000000000000000',
  '00000000000000000000000001000000',
  '0000000000000000FFFF00000100007F',
]);

/**
 * The TCP ports in LISTEN state on loopback or every address (IPv4 and IPv6), 1024–65535, not
 * `ownPort`: from the text of `/proc/net/tcp` and `/proc/net/tcp6`.
 */
export function parseListeningPorts(tables: readonly string[], ownPort: number): number[] {
  const ports = new Set<number>();
  for (const table of tables) {
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== LISTEN || !local) continue;
      const [address = '', hex = ''] = local.split(':');
      const reachable =
        address.length === 8 ? REACHABLE_V4.test(address) : REACHABLE_V6.has(address.toUpperCase());
      const port = Number.parseInt(hex, 16);
      if (reachable && port >= PORT_MIN && port <= PORT_MAX && port !== ownPort) ports.add(port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

export async function listeningPorts(ownPort: number): Promise<number[]> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((file) => readFile(file, 'utf8').catch(() => '')),
  );
  return parseListeningPorts(tables, ownPort);
}

/**
 * The port an admitted request is for (`x-svc-port`); `undefined` when the header is absent;
 * `null` when it names a port the gateway never proxies to (its own, or one out of range).
 */
export function requestedPort(
  headers: IncomingMessage['headers'],
  ownPort: number,
): number | null | undefined {
  const value = headers[PORT_HEADER];
  if (value === undefined) return undefined;
  const port = typeof value === 'string' && /^\d{4,5}$/.test(value) ? Number(value) : Number.NaN;
  return port >= PORT_MIN && port <= PORT_MAX && port !== ownPort ? port : null;
}

const OWN_COOKIES = new Set([
  GATEWAY_COOKIE,
  `__Host-${GATEWAY_COOKIE}`,
  PORT_COOKIE,
  `__Host-${PORT_COOKIE}`,
]);

/** The request's headers for the user's app: without `x-svc-port` and the service's cookies. */
function appHeaders(headers: IncomingMessage['headers']): IncomingMessage['headers'] {
  const { [PORT_HEADER]: _port, cookie, ...rest } = headers;
  const kept = (cookie ?? '')
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '' && !OWN_COOKIES.has(part.split('=')[0] ?? ''));
  return kept.length > 0 ? { ...rest, cookie: kept.join('; ') } : rest;
}

/**
 * `localhost` as both loopback addresses, IPv4 first: with `autoSelectFamily` a connection tries
 * the next when one is refused, so a server bound to `::1` alone (as some dev servers bind
 * `localhost`) is reached too.
 */
const loopback: LookupFunction = (_host, _options, callback) =>
  (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);

const target = (port: number) => ({
  host: 'localhost',
  port,
  lookup: loopback,
  autoSelectFamily: true,
});

/**
 * The app's answer headers for the browser, without cookies that would reach past the port's
 * own host (`Domain=`: every other Agent's and port's host under the Agents' domain) or that
 * carry the service's cookie names.
 */
export function answerHeaders(headers: IncomingMessage['headers']): IncomingMessage['headers'] {
  const cookies = headers['set-cookie'];
  if (!cookies) return headers;
  const kept = cookies.filter((line) => {
    const [pair = '', ...attributes] = line.split(';');
    const name = pair.split('=')[0]?.trim() ?? '';
    const widened = attributes.some((a) => a.trim().toLowerCase().startsWith('domain='));
    return !widened && !OWN_COOKIES.has(name);
  });
  const { 'set-cookie': _all, ...rest } = headers;
  return kept.length > 0 ? { ...rest, 'set-cookie': kept } : rest;
}

/** Hands a request to the port inside the machine, its answer streamed back. */
export function proxyToPort(req: IncomingMessage, res: ServerResponse, port: number): void {
  const upstream = request(
    { ...target(port), method: req.method, path: req.url ?? '/', headers: appHeaders(req.headers) },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answerHeaders(answer.headers));
      answer.pipe(res);
    },
  );
  // A client that leaves mid-answer (a long poll, a stream) ends the app's side too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.on('error', () => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(502, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(`Nothing answers on port ${port} inside the Agent.\n`);
  });
  req.pipe(upstream);
}

/** Hands a WebSocket upgrade to the port, byte for byte after the request's head. */
export function proxyUpgradeToPort(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  port: number,
): void {
  const upstream = createConnection(target(port), () => {
    const lines = Object.entries(appHeaders(req.headers)).flatMap(([name, value]) =>
      [value ?? []].flat().map((v) => `${name}: ${v}`),
    );
    upstream.write(`${req.method} ${req.url ?? '/'} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', () => {
    if (socket.writable && upstream.bytesRead === 0) {
      socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
    } else socket.destroy();
  });
  socket.on('error', () => upstream.destroy());
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.destroy());
}
