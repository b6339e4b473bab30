import { Validator } from '@seriousme/openapi-schema-validator';
import { openapi } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../test/test-context.js';

describe('GET /api/openapi.json', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('pglite');
  });
  afterAll(() => t?.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    const res = await t.client.call(openapi);
    expect(res.body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every route the app serves, and nothing else', async () => {
    const doc = (await t.client.call(openapi)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = t.app.routes
      .filter((route) => route.method !== 'ALL')
      .map(
        // `:name{regex}` (a parameter with a pattern) is `{name}` in the document.
        (route) => `${route.method} ${route.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')}`,
      );
    expect(new Set(served).size).toBeGreaterThan(10);
    expect([...new Set(served)].sort()).toEqual([...new Set(documented)].sort());
  });

  it('describes request bodies and the error envelope from the contract schemas', async () => {
    const doc = (await t.client.call(openapi)).body;
    const signUp = ['paths', '/api/auth/sign-up', 'post'];
    const json = ['content', 'application/json', 'schema'];
    expect(doc).toHaveProperty(
      [...signUp, 'requestBody', ...json, 'required'],
      ['email', 'password', 'name'],
    );
    expect(doc).toHaveProperty(
      [...signUp, 'responses', '409', ...json, '$ref'],
      '#/components/schemas/ErrorEnvelope',
    );
    // A user's endpoints take the session cookie or a personal access token; a few, the cookie only.
    expect(doc).toHaveProperty(
      ['paths', '/api/me', 'get', 'security'],
      [{ session: [] }, { apiToken: [] }],
    );
    expect(doc).toHaveProperty(['paths', '/api/me/tokens', 'post', 'security'], [{ session: [] }]);
    expect(doc).toMatchObject({
      components: { securitySchemes: { apiToken: { type: 'http', scheme: 'bearer' } } },
    });
    // A change may be refused to a read token (403 insufficient_scope).
    expect(doc).toHaveProperty(['paths', '/api/agents', 'post', 'responses', '403']);
  });
});
