import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import type { ProxyHeader } from '../config/config.js';

/** How the service sits behind proxies: `Config['http']`'s part that `clientAddress` reads. */
export interface ProxyTrust {
  readonly trustProxy: boolean;
  /** The header the proxies write (`TRUST_PROXY_HEADER`); `x-forwarded-for` when left out. */
  readonly trustProxyHeader?: ProxyHeader;
  readonly trustedProxyHops: number;
}

/**
 * The client's address: the socket's peer, or with `trustProxy` the entry the outermost trusted
 * proxy appended to `trustProxyHeader`, `trustedProxyHops` from the right (`proxyChain`). Each
 * proxy appends the address it was connected from, so the entries left of those are whatever the
 * client wrote and can name anyone. Fewer entries than hops (a proxy that did not append) leaves
 * the leftmost, which a trusted proxy still wrote; an entry that is no IP address is ignored for
 * the socket's peer. The other header is never read: proxies that write one pass the other on as
 * the client sent it. In-memory requests without a socket are `unknown`.
 */
export function clientAddress(c: Context, trust: ProxyTrust): string {
  if (trust.trustProxy) {
    const entries = proxyChain(c, trust.trustProxyHeader ?? 'x-forwarded-for') ?? [];
    const forwarded = entries[Math.max(0, entries.length - trust.trustedProxyHops)];
    if (forwarded && isIP(forwarded)) return forwarded;
  }
  return peerAddress(c);
}

/**
 * Whether a proxy says it forwarded the request: it carries `X-Forwarded-For` or `Forwarded`
 * (RFC 7239), either one whatever `trustProxyHeader` is (a request that claims to be forwarded
 * is never taken for this host's own). Only meaningful with `trustProxy`.
 */
export const isForwarded = (c: Context): boolean =>
  c.req.header('x-forwarded-for') !== undefined || c.req.header('forwarded') !== undefined;

/**
 * The addresses the proxies reported in `header`, the client's first: `X-Forwarded-For`'s entries,
 * or RFC 7239 `Forwarded`'s elements' `for=` (quotes, the brackets of an IPv6 address and a port
 * taken off; `unknown` and obfuscated `_names` stay, as no address). `undefined` without it.
 */
function proxyChain(c: Context, header: ProxyHeader): string[] | undefined {
  const value = c.req.header(header);
  if (value === undefined) return undefined;
  if (header === 'x-forwarded-for') return splitList(value);
  return splitList(value).map((element) => {
    const pair = element
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.toLowerCase().startsWith('for='));
    return nodeAddress(pair?.slice('for='.length) ?? '');
  });
}

const splitList = (header: string) =>
  header
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** RFC 7239's node: `192.0.2.1`, `"192.0.2.1:80"`, `"[2001:db8::1]:4711"`, `_hidden`. */
function nodeAddress(node: string): string {
  const unquoted = node.replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(unquoted);
  if (bracketed) return bracketed[1] as string;
  return unquoted.replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1');
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
