import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { errorEnvelope, LISTENING_PORTS_PATH } from '@svc/contract';
import {
  ENV_PUSH_PATH,
  ENV_PUSH_SIGNATURE_HEADER,
  HOME_SEED_CLAIM_HEADER,
  HOME_SEED_PATH,
} from '@svc/contract/agent-env-push';
import {
  GATEWAY_COOKIE,
  GATEWAY_COOKIE_TTL_SECONDS,
  GATEWAY_PREFIX,
} from '@svc/contract/gateway-ticket';
import { ENROLL_KEY_VARIABLE, ENROLL_PROOF_PATH } from '@svc/contract/gateway-tls';
import { WebSocketServer } from 'ws';
import { readAgentEnv } from '../agent-env.js';
import type { Asset } from './assets.js';
import { CODE_SERVER_PREFIX, type CodeServer } from './code-server.js';
import { EnvPushes } from './env-push.js';
import { FileAccessError, HomeFiles } from './files-api.js';
import type { GatewayAuth } from './gateway-auth.js';
import type { GatewayTls } from './gateway-tls.js';
import { HomeSeeds } from './home-seed.js';
import { editorPage, indexPage, PAGE_HEADERS, type PageContext, terminalPage } from './pages.js';
import { listeningPorts, proxyToPort, proxyUpgradeToPort, requestedPort } from './port-proxy.js';
import { TerminalSessions } from './terminal-sessions.js';

export interface GatewayOptions {
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly auth: GatewayAuth;
  /** The pages' scripts and styles, built on first use (so the gateway is up at once). */
  readonly assets: () => Promise<ReadonlyMap<string, Asset>>;
  readonly version: string;
  /** Cookies marked `Secure` (the gateway is reached over HTTPS). */
  readonly secureCookies: boolean;
  /** The VM's code-server, when it has one: the editor then is code-server, not the built-in one. */
  readonly codeServer?: CodeServer | undefined;
  /**
   * Settles once the VM's code-server has started or failed to (default: at once): the editor's
   * routes wait for it, so an Agent opened right after its boot gets VS Code, not the built-in.
   */
  readonly editorReady?: () => Promise<void>;
  /** How often open sockets have their cookie checked again (default 30 s). */
  readonly recheckMs?: number;
  /**
   * The dashboard's page that opens this Agent (`agentDashboardUrl`): a browser without access
   * is sent there, and comes back with a ticket. Without it such a browser gets a text answer.
   */
  readonly dashboardUrl?: () => Promise<string | undefined>;
  /** The Agent's name (`agentNameSource`), shown in the pages' titles and headers. */
  readonly agentName?: () => Promise<string | undefined>;
  /**
   * On a cloud machine: HTTPS only, for the service's client certificate only (`GatewayTls`).
   * Without it (the local driver's loopback machines) the gateway speaks plain HTTP.
   */
  readonly tls?: GatewayTls | undefined;
}

const CROSS_ORIGIN = errorEnvelope('forbidden', { detail: 'cross-origin request refused' });

const MAX_BODY_BYTES = 2 * 1024 * 1024 + 1024;
const SEED_ERRORS = {
  400: 'invalid_request',
  403: 'forbidden',
  404: 'not_found',
  409: 'invalid_state',
} as const;
/** How often open terminal and editor sockets have their cookie checked again. */
const RECHECK_MS = 30_000;

/**
 * The Agent's gateway: under `/_svc/` its health, version, terminal and editor, for the holders
 * of a ticket or of the cookie it turns into; `/` leads there (or, without the cookie, to the
 * dashboard to open the Agent); everything else is left for the user's own sites.
 */
export function createGatewayServer(options: GatewayOptions) {
  // `__Host-` keeps sibling subdomains from planting a cookie of the same name (HTTPS only).
  const cookieName = options.secureCookies ? `__Host-${GATEWAY_COOKIE}` : GATEWAY_COOKIE;
  const files = new HomeFiles(options.home);
  const terminals = new TerminalSessions(options.home, options.env);
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const { tls } = options;
  const pushes = new EnvPushes(options.home, tls && ((pem) => tls.take(pem)));
  const seeds = new HomeSeeds(options.home);

  /**
   * Whether `x-svc-port` may be taken from this connection: over TLS only the service's own
   * certificate gets an answer (the edge); without TLS (the local driver's loopback gateways),
   * only a loopback peer. From anyone else the header is ignored and the cookie rules apply.
   */
  const fromEdge = (req: IncomingMessage) =>
    tls !== undefined || isLoopback(req.socket.remoteAddress ?? '');

  /** The port this gateway listens on: never one it proxies to or lists. */
  const ownPort = () => (server.address() as AddressInfo | null)?.port ?? 0;

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // A shared port's request, admitted by the edge (`port-proxy.ts`): the user's app answers.
    const port = fromEdge(req) ? requestedPort(req.headers, ownPort()) : undefined;
    if (port === null) return text(res, 404, 'This port is not served.\n');
    if (port !== undefined) return proxyToPort(req, res, port);
    handle(req, res).catch((error: unknown) => {
      if (error instanceof FileAccessError)
        return json(res, error.status, errorEnvelope(error.code, { detail: error.message }));
      json(res, 500, errorEnvelope('internal_error'));
    });
  };
  const server = tls ? createTlsServer(tls.serverOptions(), onRequest) : createServer(onRequest);
  if (tls) {
    // The CA vouches for machines too: only the service's own certificate gets an answer.
    server.on('secureConnection', (socket: TLSSocket) => {
      if (!tls.isService(socket)) socket.destroy();
    });
    tls.onChange = (files) =>
      (server as ReturnType<typeof createTlsServer>).setSecureContext(files);
    tls.watch();
  }

  /** The Agent's name and its dashboard page (without `?open=1`: it is already open here). */
  async function pageContext(): Promise<PageContext> {
    await options.editorReady?.();
    const [agentName, openUrl] = await Promise.all([
      options.agentName?.(),
      options.dashboardUrl?.(),
    ]);
    return {
      agentName,
      dashboardUrl: openUrl?.replace(/\?open=1$/, ''),
      editor: options.codeServer ? 'code-server' : 'built-in',
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const route = url.pathname;
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (route === '/' && isRead) {
      if (await options.auth.isAuthorized(req.headers.cookie, cookieName)) {
        return redirect(res, `${GATEWAY_PREFIX}/`);
      }
      const dashboard = await options.dashboardUrl?.();
      if (dashboard) return redirect(res, dashboard);
    }
    if (!route.startsWith(`${GATEWAY_PREFIX}/`)) {
      return text(res, 404, 'Nothing is served here yet.\n');
    }
    if (route === `${GATEWAY_PREFIX}/health`) return json(res, 200, { status: 'ok' });
    if (route === `${GATEWAY_PREFIX}/version`) return json(res, 200, { version: options.version });
    if (route === `${GATEWAY_PREFIX}/open`) return open(url, res);
    // Asked by the service only (the edge never forwards it): the dashboard's list of ports.
    if (route === LISTENING_PORTS_PATH && req.method === 'GET') {
      return json(res, 200, { ports: await listeningPorts(ownPort()) });
    }
    // Asked by the service only (the TLS client check), while it enrolls this machine.
    if (route === ENROLL_PROOF_PATH && tls && req.method === 'GET') {
      const enrollKey = (await readAgentEnv(options.home))[ENROLL_KEY_VARIABLE];
      if (!enrollKey) return json(res, 404, errorEnvelope('not_found'));
      return json(res, 200, { proof: tls.proof(enrollKey) });
    }
    // The service's own request, authenticated by its signature, not by a browser's cookie.
    if (route === ENV_PUSH_PATH && req.method === 'POST') {
      const signature = req.headers[ENV_PUSH_SIGNATURE_HEADER];
      const answer = await pushes.take(
        await readBody(req),
        typeof signature === 'string' ? signature : undefined,
      );
      if (answer.status === 204) return void res.writeHead(204).end();
      const code = answer.status === 404 ? 'not_found' : 'forbidden';
      return json(res, answer.status, errorEnvelope(code, { detail: answer.reason }));
    }
    if (route === HOME_SEED_PATH && req.method === 'POST') {
      const header = (name: string) => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const answer = await seeds.take(
        req,
        header(HOME_SEED_CLAIM_HEADER),
        header(ENV_PUSH_SIGNATURE_HEADER),
      );
      if (answer.status === 204) return void res.writeHead(204).end();
      const code = SEED_ERRORS[answer.status];
      return json(res, answer.status, errorEnvelope(code, { detail: answer.reason }));
    }
    if (!(await options.auth.isAuthorized(req.headers.cookie, cookieName))) {
      // A person at a browser is sent to open the Agent; scripts and tools get the 401.
      const dashboard = isRead && wantsPage(req) ? await options.dashboardUrl?.() : undefined;
      if (dashboard) return redirect(res, dashboard);
      return text(res, 401, 'Unauthorized: open this Agent from the dashboard.\n');
    }
    const asset = route.startsWith(`${GATEWAY_PREFIX}/assets/`)
      ? (await options.assets()).get(route.slice(`${GATEWAY_PREFIX}/assets/`.length))
      : undefined;
    if (asset) {
      res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'private, max-age=300' });
      return res.end(asset.body);
    }
    if (route === `${GATEWAY_PREFIX}/`) return html(res, indexPage(await pageContext()));
    if (route === `${GATEWAY_PREFIX}/terminal`) return html(res, terminalPage(await pageContext()));
    if (route === CODE_SERVER_PREFIX || route.startsWith(`${CODE_SERVER_PREFIX}/`)) {
      await options.editorReady?.();
    }
    if (options.codeServer && route.startsWith(`${CODE_SERVER_PREFIX}/`)) {
      // code-server's own port forwarding would put the user's apps on this origin, where
      // their scripts could drive the terminal: not through the gateway.
      if (/^\/_svc\/editor\/(abs)?proxy\//.test(route)) return text(res, 404, 'Not found.\n');
      const isSafe = req.method === 'GET' || req.method === 'HEAD';
      if (!isSafe && !isSameOrigin(req)) return json(res, 403, CROSS_ORIGIN);
      return options.codeServer.proxy(req, res);
    }
    if (route === CODE_SERVER_PREFIX) {
      if (!options.codeServer) return html(res, editorPage(await pageContext()));
      res.writeHead(302, { location: `${CODE_SERVER_PREFIX}/` });
      return res.end();
    }
    const path = url.searchParams.get('path') ?? '';
    if (route === `${GATEWAY_PREFIX}/api/tree` && req.method === 'GET') {
      return json(res, 200, { entries: await files.list(path) });
    }
    if (route === `${GATEWAY_PREFIX}/api/file` && req.method === 'GET') {
      return json(res, 200, { content: await files.read(path) });
    }
    const isWrite = route.startsWith(`${GATEWAY_PREFIX}/api/`) && !isRead;
    if (isWrite && !isSameOrigin(req)) return json(res, 403, CROSS_ORIGIN);
    if (route === `${GATEWAY_PREFIX}/api/file` && req.method === 'PUT') {
      await files.write(path, await readBody(req));
      return json(res, 200, { saved: path });
    }
    if (route === `${GATEWAY_PREFIX}/api/file` && req.method === 'POST') {
      await files.create(path);
      return json(res, 201, { created: path });
    }
    if (route === `${GATEWAY_PREFIX}/api/file` && req.method === 'DELETE') {
      await files.remove(path);
      return json(res, 200, { deleted: path });
    }
    if (route === `${GATEWAY_PREFIX}/api/rename` && req.method === 'POST') {
      const to = url.searchParams.get('to') ?? '';
      await files.rename(path, to);
      return json(res, 200, { renamed: path, to });
    }
    return text(res, 404, 'Not found.\n');
  }

  /** The ticket the dashboard sent the browser with becomes this origin's cookie. */
  async function open(url: URL, res: ServerResponse) {
    const result = await options.auth.redeemTicket(url.searchParams.get('ticket') ?? '');
    if (!result.ok)
      return text(
        res,
        401,
        'This link is no longer valid: open the Agent again from the dashboard.\n',
      );
    const cookie = [
      `${cookieName}=${result.cookie}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${GATEWAY_COOKIE_TTL_SECONDS}`,
      ...(options.secureCookies ? ['Secure'] : []),
    ].join('; ');
    res.writeHead(302, {
      location: `${GATEWAY_PREFIX}/`,
      'set-cookie': cookie,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
  }

  /** Open sockets with the cookie they came with, re-checked while they stay open. */
  const live = new Set<{ cookie: string | undefined; close(): void }>();
  const recheck = setInterval(() => {
    for (const entry of live) {
      void options.auth.isAuthorized(entry.cookie, cookieName).then((ok) => {
        if (!ok) entry.close();
      });
    }
  }, options.recheckMs ?? RECHECK_MS);
  recheck.unref();

  server.on('upgrade', (req, socket, head) => {
    // A reset or a malformed request must cost this socket, never the gateway.
    socket.on('error', () => socket.destroy());
    const port = fromEdge(req) ? requestedPort(req.headers, ownPort()) : undefined;
    if (port === null)
      return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    if (port !== undefined) return proxyUpgradeToPort(req, socket, head, port);
    upgrade(req, socket, head).catch(() => socket.destroy());
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const cookie = req.headers.cookie;
    if (url.pathname.startsWith(`${CODE_SERVER_PREFIX}/`)) await options.editorReady?.();
    const toEditor =
      options.codeServer !== undefined && url.pathname.startsWith(`${CODE_SERVER_PREFIX}/`);
    const allowed =
      (url.pathname === `${GATEWAY_PREFIX}/terminal/ws` || toEditor) &&
      isSameOrigin(req) &&
      (await options.auth.isAuthorized(cookie, cookieName));
    if (!allowed) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
      return;
    }
    if (toEditor) {
      const entry = { cookie, close: () => socket.destroy() };
      live.add(entry);
      socket.once('close', () => live.delete(entry));
      return options.codeServer?.proxyUpgrade(req, socket, head);
    }
    sockets.handleUpgrade(req, socket, head, (ws) => {
      const size = {
        cols: clamp(Number(url.searchParams.get('cols')), 80),
        rows: clamp(Number(url.searchParams.get('rows')), 24),
      };
      const viewer = {
        send: (data: string) => ws.send(data),
        close: (code: number, reason: string) => ws.close(code, reason),
      };
      const known = url.searchParams.get('session') ?? undefined;
      const id = terminals.attach(known, viewer, size, (session) =>
        ws.send(JSON.stringify({ session })),
      );
      // A cookie that stops being valid (new token after a transfer, expiry) ends the socket.
      const entry = { cookie, close: () => ws.close(4003, 'access ended') };
      live.add(entry);
      ws.on('message', (raw) => {
        const message = parseMessage(String(raw));
        if (message?.t === 'i') terminals.input(id, message.d);
        if (message?.t === 'r') terminals.resize(id, clamp(message.c, 80), clamp(message.r, 24));
      });
      ws.on('close', () => {
        live.delete(entry);
        terminals.detach(id, viewer);
      });
    });
  }

  return {
    server,
    close: async () => {
      clearInterval(recheck);
      tls?.close();
      terminals.close();
      options.codeServer?.stop();
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Message = { t: 'i'; d: string } | { t: 'r'; c: number; r: number };

function parseMessage(raw: string): Message | undefined {
  try {
    const value = JSON.parse(raw) as Message;
    if (value.t === 'i' && typeof value.d === 'string') return value;
    if (value.t === 'r' && Number.isFinite(value.c) && Number.isFinite(value.r)) return value;
  } catch {}
  return undefined;
}

const clamp = (value: number, fallback: number) =>
  Number.isInteger(value) && value >= 2 && value <= 1000 ? value : fallback;

/** A browser's state-changing request must come from a page of this gateway. */
function isSameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin) return false;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new FileAccessError(413, 'too large for the editor');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A browser navigating asks for HTML first; `fetch` and tools do not. */
const wantsPage = (req: IncomingMessage) => (req.headers.accept ?? '').includes('text/html');

const redirect = (res: ServerResponse, location: string) => {
  res.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  res.end();
};

const html = (res: ServerResponse, body: string) => {
  res.writeHead(200, PAGE_HEADERS);
  res.end(body);
};

const text = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(body);
};

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
};

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
const isLoopback = (address: string) => /^(::ffff:)?127\./.test(address) || address === '::1';
