import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';

/** How the service sits behind proxies: `Config['http']`'s part that `clientAddress` reads. */
export interface ProxyTrust {
  readonly trustProxy: boolean;
  readonly trustedProxyHops: number;
}

/**
 * The client's address: the socket's peer, or with `trustProxy` the `X-Forwarded-For` entry the
 * outermost trusted proxy appended, `trustedProxyHops` from the right. Each proxy appends the
 * address it was connected from, so the entries left of those are whatever the client wrote and
 * can name anyone. Fewer entries than hops (a proxy that did not append) leaves the leftmost, which
 * a trusted proxy still wrote; an entry that is no IP address is ignored for the socket's peer.
 * In-memory requests without a socket are `unknown`.
 */
export function clientAddress(c: Context, trust: ProxyTrust): string {
  if (trust.trustProxy) {
    const entries = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    const forwarded = entries[Math.max(0, entries.length - trust.trustedProxyHops)];
    if (forwarded && isIP(forwarded)) return forwarded;
  }
  return peerAddress(c);
}

/** The socket's peer, whatever the proxies wrote; `unknown` for in-memory requests. */
export function peerAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Whether the socket's peer is this host: 127.0.0.0/8 or ::1 (IPv4-mapped too). */
export function isLoopbackPeer(c: Context): boolean {
  const address = peerAddress(c);
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}
