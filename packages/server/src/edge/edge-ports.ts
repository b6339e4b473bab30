import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { isPortPath, PORT_COOKIE, PORT_OPEN_PATH, type PortShare, type Role } from '@svc/contract';
import { GATEWAY_COOKIE, readCookieValues } from '@svc/contract/gateway-ticket';
import { findRole } from '../accounts/accounts.repo.js';
import { isApiTokenLive } from '../accounts/api-tokens.repo.js';
import { MANAGERS } from '../accounts/membership.js';
import { isSessionLive } from '../accounts/sessions.repo.js';
import type { Clock } from '../adapters/clock.js';
import {
  checkPortCookie,
  checkPortTicket,
  issuePortCookie,
  PORT_COOKIE_TTL_SECONDS,
  type PortOpener,
  portAccessKey,
} from '../agents/agent-port-access.js';
import * as portsRepo from '../agents/agent-ports.repo.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { type EdgePage, sendPage, sendPageOnSocket } from './edge-pages.js';

/**
 * How long a port's share level, and a person's role in an account, are used without asking the
 * database again: a port made private or unshared, or a member removed, takes effect within it.
 */
export const PORT_ACCESS_TTL_MS = 5_000;
export const ROLE_TTL_MS = 10_000;
/** At most this many entries per cache; past it the oldest goes first. */
const MAX_ENTRIES = 10_000;

export const NOT_SHARED: EdgePage = {
  status: 404,
  title: 'Nothing shared here',
  message: 'This port of the Agent is not shared. Share it from the Agent’s page in the dashboard.',
};

export const PORT_FORBIDDEN: EdgePage = {
  status: 403,
  title: 'Not yours to open',
  message:
    'This port is shared with other people: ask an owner or admin of the Agent’s account to share it with you.',
};

/** Cookies of the service that never reach a user's app: the gateway's and the ports'. */
const OWN_COOKIES = new Set([
  GATEWAY_COOKIE,
  `__Host-${GATEWAY_COOKIE}`,
  PORT_COOKIE,
  `__Host-${PORT_COOKIE}`,
]);

export interface EdgePortsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly hmacKey: Buffer;
  /** The dashboard's URL: a browser without the port's cookie is sent to open it there. */
  readonly publicUrl: string;
  /** Where Agents are served; over `https` the cookie is `Secure` and `__Host-`. */
  readonly agentOrigin: { readonly scheme: string };
  readonly log: Logger;
}

/** What to do with a request for a port's host. */
type Decision =
  | { kind: 'pass' }
  | { kind: 'page'; page: EdgePage }
  | { kind: 'sign_in'; location: string | undefined };

/**
 * A small map whose entries expire, the oldest dropped first once full. Only found values are
 * kept: a port just shared, or a member just added, is reached at once.
 */
function expiringCache<V>(clock: Clock, ttlMs: number) {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  return async (key: string, load: () => Promise<V | undefined>): Promise<V | undefined> => {
    const now = clock.now().getTime();
    const hit = entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = await load();
    entries.delete(key);
    if (value === undefined) return value;
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    entries.set(key, { value, expiresAt: now + ttlMs });
    return value;
  };
}

/**
 * The edge's part of shared ports (`<port>--<subdomain>.<agent domain>`): who may reach a port,
 * checked on every request before it goes to the Agent's gateway. `public`: anyone. `account`:
 * members of the Agent's account, `private`: its owners and admins, each known by the port's
 * cookie, which the edge sets itself at `/_svc/port-open` from a single-use ticket the dashboard
 * hands out; the person's current role and the port's current share level are read again every
 * few seconds, so the cookie carries no rights of its own. Nor does it outlive the session (or
 * personal access token) that opened the port: that is looked up on every request, uncached, so
 * a sign-out, a revoked session or token, or its expiry ends the cookie at once. The service's cookies are taken off
 * every request that goes on to the user's app.
 */
export function createEdgePorts(deps: EdgePortsDeps) {
  const key = portAccessKey(deps.hmacKey);
  const secure = deps.agentOrigin.scheme === 'https';
  const cookieName = secure ? `__Host-${PORT_COOKIE}` : PORT_COOKIE;
  const shares = expiringCache<{ share: PortShare; accountId: string }>(
    deps.clock,
    PORT_ACCESS_TTL_MS,
  );
  const roles = expiringCache<Role>(deps.clock, ROLE_TTL_MS);
  const nowSeconds = () => Math.floor(deps.clock.now().getTime() / 1000);

  const accessOf = (agentId: string, port: number) =>
    shares(`${agentId}:${port}`, () => portsRepo.findPortAccess(deps.database.db, agentId, port));
  const roleOf = (accountId: string, userId: string) =>
    roles(`${accountId}:${userId}`, () => findRole(deps.database.db, accountId, userId));

  /** Whether the session or token a cookie names is still the user's and live. */
  const openerLive = ({ userId, opener }: { userId: string; opener: PortOpener }) =>
    (opener.kind === 'session' ? isSessionLive : isApiTokenLive)(
      deps.database.db,
      opener.id,
      userId,
      deps.clock.now(),
    );

  async function decide(req: IncomingMessage, agentId: string, port: number): Promise<Decision> {
    const access = await accessOf(agentId, port);
    if (!access) return { kind: 'page', page: NOT_SHARED };
    if (access.share === 'public') return { kind: 'pass' };
    const claims = readCookieValues(req.headers.cookie, cookieName)
      .map((value) => checkPortCookie(key, { agentId, port, nowSeconds: nowSeconds() }, value))
      .filter((claim) => claim !== undefined);
    // A cookie whose session has ended counts as no cookie at all.
    const users: string[] = [];
    for (const claim of claims) if (await openerLive(claim)) users.push(claim.userId);
    if (users.length === 0) {
      // A person at a browser is sent to open the port from the dashboard; scripts get the 401.
      const isRead = req.method === 'GET' || req.method === 'HEAD';
      const page = isRead && (req.headers.accept ?? '').includes('text/html');
      const next = new URLSearchParams({ next: pathOf(req.url) });
      const location = `${deps.publicUrl}/dashboard/agents/${agentId}/ports/${port}/open?${next}`;
      return { kind: 'sign_in', location: page ? location : undefined };
    }
    for (const userId of new Set(users)) {
      const role = await roleOf(access.accountId, userId);
      if (role && (access.share === 'account' || MANAGERS.includes(role))) return { kind: 'pass' };
    }
    return { kind: 'page', page: PORT_FORBIDDEN };
  }

  /** `/_svc/port-open?ticket=…&next=…`: the ticket is spent, the cookie set, and on to `next`. */
  async function open(req: IncomingMessage, res: ServerResponse, agentId: string, port: number) {
    const url = new URL(req.url ?? '/', 'http://edge');
    const now = nowSeconds();
    const ticket = checkPortTicket(
      key,
      { agentId, port, nowSeconds: now },
      url.searchParams.get('ticket') ?? '',
    );
    const spent =
      ticket &&
      (await portsRepo.spendPortTicket(
        deps.database.db,
        ticket.nonce,
        new Date(ticket.expiresAtSeconds * 1000),
        deps.clock.now(),
      ));
    if (!ticket || !spent) {
      res.writeHead(401, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
      });
      return res.end('This link is no longer valid: open the port again from the dashboard.\n');
    }
    const cookie = [
      `${cookieName}=${issuePortCookie(key, { agentId, port, userId: ticket.userId, opener: ticket.opener }, now)}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${PORT_COOKIE_TTL_SECONDS}`,
      ...(secure ? ['Secure'] : []),
    ].join('; ');
    res.writeHead(302, {
      location: pathOf(url.searchParams.get('next') ?? '/'),
      'set-cookie': cookie,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
  }

  return {
    /**
     * Whether a request for `port` of the Agent may go on to its gateway: `true` once admitted
     * (the service's cookies taken off it); `false` when it was answered here (the port's
     * cookie being set, a redirect to the dashboard, 401, 403 or 404).
     */
    async admit(
      req: IncomingMessage,
      res: ServerResponse,
      agentId: string,
      port: number,
      dashboardUrl: string,
    ): Promise<boolean> {
      try {
        if (new URL(req.url ?? '/', 'http://edge').pathname === PORT_OPEN_PATH) {
          await open(req, res, agentId, port);
          return false;
        }
        const decision = await decide(req, agentId, port);
        if (res.destroyed) return false;
        if (decision.kind === 'pass') {
          stripOwnCookies(req);
          return true;
        }
        if (decision.kind === 'page') sendPage(res, decision.page, dashboardUrl);
        else if (decision.location) {
          res.writeHead(302, {
            location: decision.location,
            'cache-control': 'no-store',
            'referrer-policy': 'no-referrer',
          });
          res.end();
        } else {
          res.writeHead(401, {
            'content-type': 'text/plain; charset=utf-8',
            'cache-control': 'no-store',
          });
          res.end('Unauthorized: open this port from the dashboard.\n');
        }
      } catch (err) {
        deps.log.error({ err, agentId, port }, 'edge could not check a shared port');
        if (!res.headersSent) res.writeHead(503, { 'cache-control': 'no-store' });
        res.end();
      }
      return false;
    },

    /** As `admit`, for a WebSocket upgrade: refused ones hear 401, 403 or 404 and close. */
    async admitUpgrade(
      req: IncomingMessage,
      socket: Duplex,
      agentId: string,
      port: number,
      dashboardUrl: string,
    ): Promise<boolean> {
      try {
        const decision = await decide(req, agentId, port);
        if (decision.kind === 'pass') {
          stripOwnCookies(req);
          return true;
        }
        if (decision.kind === 'page') sendPageOnSocket(socket, decision.page, dashboardUrl);
        else socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
      } catch (err) {
        deps.log.error({ err, agentId, port }, 'edge could not check a shared port');
        socket.destroy();
      }
      return false;
    },
  };
}

export type EdgePorts = ReturnType<typeof createEdgePorts>;

/** A path on this host (`/…`), never another origin (`//host`, `/\host`, `https:…`): else `/`. */
function pathOf(value: string | undefined): string {
  const path = value ?? '/';
  return isPortPath(path) ? path : '/';
}

/** Takes the service's cookies off the request; the user's own stay as they were. */
function stripOwnCookies(req: IncomingMessage): void {
  const header = req.headers.cookie;
  if (header === undefined) return;
  const kept = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '' && !OWN_COOKIES.has(part.split('=')[0] ?? ''));
  if (kept.length === 0) delete req.headers.cookie;
  else req.headers.cookie = kept.join('; ');
}
