import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { clientAddress, type ProxyTrust } from './client-address.js';

const PEER = '192.0.2.9';

/** The address `clientAddress` finds for a request from `PEER` carrying `forwardedFor`. */
async function addressOf(trust: ProxyTrust, forwardedFor?: string) {
  const app = new Hono();
  app.get('/', (c) => c.text(clientAddress(c, trust)));
  const headers = forwardedFor === undefined ? undefined : { 'x-forwarded-for': forwardedFor };
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
});
