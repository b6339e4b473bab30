import { describe, expect, it } from 'vitest';
import { loadConformance } from './conformance.js';
import { startHetznerStandIn } from './stand-in.js';
import { apiOf, conformanceOrWarn } from './test-helpers.js';

describe('conformance checker', () => {
  it('names the variable when HCLOUD_OPENAPI is missing or unreadable', async () => {
    const saved = process.env.HCLOUD_OPENAPI;
    try {
      delete process.env.HCLOUD_OPENAPI;
      expect(await loadConformance()).toEqual({
        skipped: expect.stringContaining('HCLOUD_OPENAPI'),
      });
      process.env.HCLOUD_OPENAPI = '/nonexistent/cloud.spec.json';
      expect(await loadConformance()).toEqual({
        skipped: expect.stringContaining('HCLOUD_OPENAPI'),
      });
    } finally {
      if (saved === undefined) delete process.env.HCLOUD_OPENAPI;
      else process.env.HCLOUD_OPENAPI = saved;
    }
  });

  it('reports wrong responses, wrong requests and undescribed operations', async () => {
    const conformance = await conformanceOrWarn();
    if (!conformance) return console.warn('negative conformance checks not run');
    const server = { id: 1, name: 'x', status: 'running' };
    conformance.checkResponse('GET', '/v1/servers/1', 200, { server });
    conformance.checkResponse('DELETE', '/v1/firewalls/1', 204, { unexpected: true });
    conformance.checkResponse('GET', '/v1/actions/7', 404, { error: { code: 1 } });
    conformance.checkRequest('POST', '/v1/servers', new URLSearchParams(), { name: 'x' });
    conformance.checkRequest('GET', '/v1/servers', new URLSearchParams('colour=red'), undefined);
    conformance.checkRequest('GET', '/v1/actions', new URLSearchParams('id=abc'), undefined);
    conformance.checkRequest('POST', '/v1/servers/1/actions/teleport', new URLSearchParams(), {});
    const [wrongServer, extraBody, wrongError, missing, unknownQuery, badId, undescribed] =
      conformance.mismatches;
    expect(wrongServer).toMatch(
      /^GET \/v1\/servers\/1 → 200: response body .*must have required property 'public_net'/,
    );
    expect(extraBody).toContain('DELETE /v1/firewalls/1 → 204: body given, none described');
    expect(wrongError).toMatch(
      /^GET \/v1\/actions\/7 → 404: response body .*\/error\/code must be string/,
    );
    expect(missing).toMatch(/^POST \/v1\/servers: request body .*'server_type'/);
    expect(unknownQuery).toBe('GET /v1/servers: query parameter colour is not described');
    expect(badId).toMatch(/^GET \/v1\/actions: query \/id\/0 must be integer/);
    expect(undescribed).toMatch(/teleport: not an operation of the description/);
    expect(conformance.mismatches).toHaveLength(7);
  });

  it('catches a stand-in answer that breaks the description', async () => {
    const conformance = await conformanceOrWarn();
    if (!conformance) return console.warn('negative conformance checks not run');
    const standIn = await startHetznerStandIn({ conformance });
    try {
      // A fault answer with a status the operation's description has no room for.
      standIn.faults.failNext({ path: /^\/locations$/ }, { status: 302, code: 'moved' });
      await apiOf(standIn)('GET', '/locations');
      expect(conformance.mismatches).toEqual(['GET /v1/locations → 302: status not described']);
    } finally {
      await standIn.close();
    }
  });
});
