import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { type ErrorCode, type ErrorEnvelope, errorStatus } from '@svc/contract';

/**
 * How long a connection the service closes keeps reading what the client still sends before it
 * is dropped (see `lingeringClose`).
 */
export const LINGER_MS = 3000;

/** What Node refuses before the app sees a request, and the code each is answered with. */
const PRE_APP_ERRORS: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'headers_too_large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'payload_too_large',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};

type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;

/**
 * Hosts answered before the app sees them (the Agents' edge proxy): the part that claims a
 * request by its `Host` gets it, WebSocket upgrades included, as Node's raw request and response.
 */
export interface HostRoute {
  /** Whether the request is this route's (decided from its headers alone, synchronously). */
  claims(req: IncomingMessage): boolean;
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/**
 * The app on Node's HTTP server (@hono/node-server's request listener), with what Node does not
 * do for it: requests Node refuses itself (oversized headers, malformed HTTP, a request that takes
 * too long to arrive) get the JSON error envelope too, and a connection the service closes (after
 * a `Connection: close` answer such as a 413) is closed without losing the answer. A `front`
 * route answers the hosts it claims instead of the app; upgrades go to it alone (the app has no
 * WebSockets: an upgrade it does not claim reaches the app as an ordinary request).
 */
export function startHttpServer(
  app: { fetch: Fetch },
  options: { readonly port: number; readonly host: string },
  onListening?: (info: AddressInfo) => void,
  front?: HostRoute,
): Server {
  const toApp = getRequestListener(app.fetch, { hostname: options.host });
  const server = createServer(
    { shouldUpgradeCallback: (req) => front?.claims(req) ?? false },
    (req, res) => {
      if (front?.claims(req)) front.request(req, res);
      else void toApp(req, res);
    },
  );
  if (front) server.on('upgrade', (req, socket, head) => front.upgrade(req, socket, head));
  server.listen(options.port, options.host, () => onListening?.(server.address() as AddressInfo));
  server.on('clientError', answerClientError);
  // The request a connection is on, so closing it can drain that request's unread body.
  const requests = new WeakMap<Duplex, IncomingMessage>();
  server.on('request', (req: IncomingMessage) => requests.set(req.socket, req));
  server.on('connection', (socket: Socket) => {
    // Node ends a connection after a `Connection: close` answer with `destroySoon`: end, then
    // destroy as soon as the answer is written. Request bytes still unread at that moment (the
    // rest of a refused body) make the kernel reset the connection, and a reset can discard the
    // answer before the client has read it.
    socket.destroySoon = () => lingeringClose(socket, requests.get(socket));
  });
  return server;
}

const answered = new WeakSet<Duplex>();

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex) {
  // Node's parser reports every further chunk of a broken request again: answer once.
  if (answered.has(socket)) return;
  // As Node's default: no answer to a peer that is gone or in the middle of a response.
  const inFlight = (socket as { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const code = PRE_APP_ERRORS[error.code ?? ''] ?? 'invalid_request';
  const status = errorStatus[code];
  const body = JSON.stringify({ error: code } satisfies ErrorEnvelope);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ].join('\r\n');
  lingeringClose(socket, undefined, `${head}\r\n\r\n${body}`);
}

const lingering = new WeakSet<Duplex>();

/**
 * Ends the connection after `last` (what is still to be written) and keeps reading, and dropping,
 * what the client sends until it closes too or `LINGER_MS` pass: closing with unread bytes would
 * answer them with a reset, which can destroy the answer in the client's buffers.
 */
function lingeringClose(socket: Duplex, request?: IncomingMessage, last?: string) {
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end(last);
  if (request && !request.complete) {
    // Its body still arrives through the request, whose reader (the app's body stream) stopped
    // pulling and pauses it: drop the bytes instead, as Node does for a request nobody read.
    request.removeAllListeners('data');
    request.on('data', () => {});
    request.resume();
  }
  socket.resume();
}
