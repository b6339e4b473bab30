import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { escapeHtml } from '../util/escape-html.js';

/** What the edge answers itself, when it has no gateway to hand the request to. */
export interface EdgePage {
  readonly status: 403 | 404 | 409 | 502 | 503;
  readonly title: string;
  readonly message: string;
  /** The browser loads the same address again after this long (an Agent on its way up). */
  readonly refreshSeconds?: number;
}

export const UNKNOWN_AGENT: EdgePage = {
  status: 404,
  title: 'No Agent here',
  message: 'There is no Agent at this address.',
};

/** A path of an Agent's gateway that only the service may use (the edge never forwards it). */
export const NOT_FOUND: EdgePage = {
  status: 404,
  title: 'Not found',
  message: 'Nothing is served at this address.',
};

export const notRunning = (state: string): EdgePage => ({
  status: 503,
  title: 'This Agent is not running',
  message: `It is ${state}. Start it from the dashboard, then open it again.`,
});

/** How often a page of an Agent on its way to `running` looks again. */
const STARTING_REFRESH_SECONDS = 2;

/** An Agent on its way to `running` (woken by this visit, or started elsewhere). */
export const starting = (state: string): EdgePage => ({
  status: 503,
  title: 'Starting…',
  message: `This Agent is ${state}. This page continues to it once it runs.`,
  refreshSeconds: STARTING_REFRESH_SECONDS,
});

/** A visit would have started the Agent, and the start was refused. */
export const wakeRefused = (reason: string): EdgePage => ({
  status: 409,
  title: 'This Agent cannot start',
  message: `${reason.charAt(0).toUpperCase()}${reason.slice(1).replace(/\.$/, '')}. Check it in the dashboard.`,
});

export const UNREACHABLE: EdgePage = {
  status: 502,
  title: 'This Agent is not reachable right now',
  message: 'Its machine did not answer. Try again in a moment, or check it in the dashboard.',
};

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

const refresh = (page: EdgePage) =>
  page.refreshSeconds ? `<meta http-equiv="refresh" content="${page.refreshSeconds}">` : '';

function render(page: EdgePage, dashboardUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(page.title)}</title>${refresh(page)}<link rel="icon" href="data:,">
<style>:root{color-scheme:light dark;font-family:system-ui,sans-serif}main{max-width:36rem;margin:4rem auto;padding:0 1rem}</style>
</head><body><main><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p>
<p><a href="${escapeHtml(dashboardUrl)}">Go to the dashboard</a></p></main></body></html>
`;
}

/** Answers an HTTP request with the page (no body for HEAD, as Node does). */
export function sendPage(res: ServerResponse, page: EdgePage, dashboardUrl: string): void {
  const body = render(page, dashboardUrl);
  res.writeHead(page.status, { ...HEADERS, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Sends a browser on to `location` (the dashboard, to open or start the Agent from there). */
export function sendRedirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  res.end();
}

/** Answers a WebSocket upgrade that cannot be proxied with the page, then closes. */
export function sendPageOnSocket(socket: Duplex, page: EdgePage, dashboardUrl: string): void {
  if (!socket.writable) return;
  const body = render(page, dashboardUrl);
  const head = [
    `HTTP/1.1 ${page.status} ${STATUS_CODES[page.status]}`,
    ...Object.entries(HEADERS).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
}
