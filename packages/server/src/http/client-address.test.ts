import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { clientAddress, type ProxyTrust } from './client-address.js';

const PEER = '192.0.2.9';

/** The address `clientAddress` finds for a request from `PEER` carrying `forwardedFor`. */
const addressOf = (trust: ProxyTrust, forwardedFor?: string) =>
  addressWith(trust, forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor });

/** The address `clientAddress` finds for a request from `PEER` with these headers. */
async function addressWith(trust: ProxyTrust, headers: Record<string, string>) {
  const app = new Hono();
  app.get('/', (c) => c.text(clientAddress(c, trust)));
  // @hono/node-server hands the app the incoming message; its socket is the peer.
  const res = await app.request(
    '/',
    { headers },
    { incoming: { socket: { remoteAddress: PEER } } },
  );
  return res.text();
}

describe('clientAddress', () => {
  it('is the socket peer unless proxies are trusted', async () => {
    const trust = { trustProxy: false, trustedProxyHops: 1 };
    expect(await addressOf(trust)).toBe(PEER);
    expect(await addressOf(trust, '203.0.113.7')).toBe(PEER);
  });

  it('takes the entry the trusted proxy appended, not the ones the client wrote', async () => {
    const oneHop = { trustProxy: true, trustedProxyHops: 1 };
    expect(await addressOf(oneHop, '203.0.113.7')).toBe('203.0.113.7');
    // The client sent `X-Forwarded-For: 10.0.0.1`; the proxy appended the address it saw.
    expect(await addressOf(oneHop, '10.0.0.1, 203.0.113.7')).toBe('203.0.113.7');
    expect(await addressOf(oneHop, '10.0.0.1,198.51.100.4 , 203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts TRUSTED_PROXY_HOPS entries from the right', async () => {
    const twoHops = { trustProxy: true, trustedProxyHops: 2 };
    // client wrote 10.0.0.1; the outer proxy saw 203.0.113.7; the inner one saw the outer proxy.
    expect(await addressOf(twoHops, '10.0.0.1, 203.0.113.7, 198.51.100.4')).toBe('203.0.113.7');
    expect(await addressOf(twoHops, '203.0.113.7')).toBe('203.0.113.7');
  });

  it('falls back to the socket peer without a usable entry', async () => {
    const oneHop = { trustProxy: true, trustedProxyHops: 1 };
    expect(await addressOf(oneHop)).toBe(PEER);
    expect(await addressOf(oneHop, '')).toBe(PEER);
    expect(await addressOf(oneHop, '10.0.0.1, not-an-address')).toBe(PEER);
    expect(await addressOf(oneHop, '2001:db8::1')).toBe('2001:db8::1');
  });

  it('reads RFC 7239 Forwarded with TRUST_PROXY_HEADER=forwarded', async () => {
    const oneHop = {
      trustProxy: true,
      trustProxyHeader: 'forwarded',
      trustedProxyHops: 1,
    } as const;
    const forwarded = (value: string) => addressWith(oneHop, { forwarded: value });
    expect(await forwarded('for=203.0.113.7')).toBe('203.0.113.7');
    expect(await forwarded('for=10.0.0.1, for=203.0.113.7;proto=https')).toBe('203.0.113.7');
    expect(await forwarded('proto=https;For="203.0.113.7:4711"')).toBe('203.0.113.7');
    expect(await forwarded('for="[2001:db8::1]:4711"')).toBe('2001:db8::1');
    expect(await forwarded('for=_hidden')).toBe(PEER);
    expect(await forwarded('for=unknown')).toBe(PEER);
    expect(
      await addressWith({ ...oneHop, trustProxy: false }, { forwarded: 'for=203.0.113.7' }),
    ).toBe(PEER);
  });

  it('reads only the header the proxies write: a client cannot name itself in the other', async () => {
    const both = { 'x-forwarded-for': '198.51.100.4', forwarded: 'for=203.0.113.7' };
    // Behind a proxy that writes only Forwarded, X-Forwarded-For is the client's own.
    const standard = {
      trustProxy: true,
      trustProxyHeader: 'forwarded',
      trustedProxyHops: 1,
    } as const;
    expect(await addressWith(standard, both)).toBe('203.0.113.7');
    expect(await addressWith(standard, { 'x-forwarded-for': '198.51.100.4' })).toBe(PEER);
    // And the other way round (the default).
    const legacy = { trustProxy: true, trustedProxyHops: 1 };
    expect(await addressWith(legacy, both)).toBe('198.51.100.4');
    expect(await addressWith(legacy, { forwarded: 'for=203.0.113.7' })).toBe(PEER);
    expect(await addressWith({ ...legacy, trustProxyHeader: 'x-forwarded-for' }, both)).toBe(
      '198.51.100.4',
    );
  });
});
