import { bundlePage, createOrg, ErrorEnvelope, listAgents, openapi } from '@svc/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, complete, manifestOf, stageAndPublish } from '../test/bundle-test-helpers.js';
import { type JsonSchema, schemaArbitrary } from '../test/schema-arbitrary.js';
import { cursorArbitrary } from '../test/search-cursors.js';
import { errorOf, type RawResponse, type TestClient } from '../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../test/test-context.js';
import { databaseKinds } from '../test/test-db.js';

// Every endpoint of the OpenAPI document, with inputs derived from its own schemas: no input may
// answer 500, and a string that is not well-formed text (a NUL, an unpaired surrogate) anywhere
// in the path, the query or the body is a 400 `invalid_request` naming that field.

const RUNS = 12;
/** Runs for each endpoint that takes a cursor: its values are where a cast can fail. */
const CURSOR_RUNS = 150;

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly security: Record<string, unknown>[];
  readonly parameters: {
    name: string;
    in: 'path' | 'query';
    required: boolean;
    schema: JsonSchema;
  }[];
  readonly requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
}

interface Request {
  readonly params: Record<string, string>;
  readonly query: Record<string, string>;
  readonly body?: unknown;
  /** Which credential the call carries, of those the endpoint accepts. */
  readonly as: 'none' | 'session' | 'agent';
  /** Asks for a page (`Accept: text/html`), as a browser does: the public pages answer it. */
  readonly html: boolean;
}

/** Values of things that exist, so inputs reach the services and not only their 404s. */
interface Fixture {
  readonly session: TestClient;
  readonly agentToken: string;
  readonly ids: string[];
  readonly byName: Record<string, string[]>;
  /** Values for a parameter of that name beyond its schema (a cursor is opaque text to it). */
  readonly arbitraries: Record<string, fc.Arbitrary<string>>;
}

const BAD = ['\u0000', '\ud800', '\udfff'];
/** In a URL a surrogate cannot be encoded at all; a NUL can (`%00`). */
const BAD_IN_URL = ['\u0000'];

const isBad = (s: string) => s.includes('\u0000') || !s.isWellFormed();

/** `valid` with one of `chars` put somewhere in it. */
const spoiled = (valid: fc.Arbitrary<string>, chars: string[]) =>
  fc
    .tuple(valid, fc.nat(), fc.constantFrom(...chars))
    .map(([s, at, ch]) => s.slice(0, at % (s.length + 1)) + ch + s.slice(at % (s.length + 1)));

/** A string position: mostly the valid value, sometimes spoiled. */
const textWith = (chars: string[]) => (valid: fc.Arbitrary<string>) =>
  fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: spoiled(valid, chars), weight: 1 });

/** The paths of every string (and object key) of a value that is not well-formed text. */
function badPaths(value: unknown, path: (string | number)[]): string[] {
  if (typeof value === 'string') return isBad(value) ? [JSON.stringify(path)] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => badPaths(v, [...path, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [
      ...(isBad(k) ? [JSON.stringify(path)] : []),
      ...badPaths(v, [...path, k]),
    ]);
  return [];
}

const badPathsOf = (r: Request) => [
  ...badPaths(r.params, ['params']),
  ...badPaths(r.query, ['query']),
  ...(r.body === undefined ? [] : badPaths(r.body, ['body'])),
];

function credentialsOf(op: Operation): Request['as'][] {
  const kinds = op.security.flatMap((s) => Object.keys(s));
  if (kinds.length === 0) return ['none'];
  // A session and a personal access token reach the same code: fuzz it once, as a session.
  return [...new Set(kinds.map((k): Request['as'] => (k === 'agentToken' ? 'agent' : 'session')))];
}

function requestArbitrary(
  op: Operation,
  fixture: Fixture,
  bad: boolean,
  /** Query parameters every request carries (the fuzz of one parameter's values). */
  always: string[] = [],
): fc.Arbitrary<Request> {
  const body = bad ? BAD : [];
  const inUrl = bad ? BAD_IN_URL : [];
  const options = (chars: string[], outside = false) => ({
    text: chars.length > 0 ? textWith(chars) : (v: fc.Arbitrary<string>) => v,
    ids: fixture.ids,
    outside,
  });
  const param = (p: Operation['parameters'][number]) => {
    const known = [
      ...(fixture.byName[p.name] ? [fc.constantFrom(...(fixture.byName[p.name] ?? []))] : []),
      ...(fixture.arbitraries[p.name] ? [fixture.arbitraries[p.name] as fc.Arbitrary<string>] : []),
    ];
    // A URL carries text only, and an empty path segment (or `.`, `..`, which the URL resolves
    // away) would not reach the route at all; a query parameter is any text, so it also gets
    // values its schema refuses.
    const valid = schemaArbitrary(p.schema, options([], p.in === 'query'))
      .map(String)
      .filter((s) => p.in === 'query' || !['', '.', '..'].includes(s));
    const value = known.length > 0 ? fc.oneof(...known, valid) : valid;
    return inUrl.length > 0 ? textWith(inUrl)(value) : value;
  };
  const part = (where: 'path' | 'query') => {
    const list = op.parameters.filter((p) => p.in === where);
    return fc.record(Object.fromEntries(list.map((p) => [p.name, param(p)])), {
      requiredKeys: list
        .filter((p) => where === 'path' || p.required || always.includes(p.name))
        .map((p) => p.name),
    }) as fc.Arbitrary<Record<string, string>>;
  };
  const schema = op.requestBody?.content['application/json'].schema;
  return fc.record({
    params: part('path'),
    query: part('query'),
    body: schema ? schemaArbitrary(schema, options(body)) : fc.constant(undefined),
    as: fc.constantFrom(...credentialsOf(op)),
    html: fc.boolean(),
  });
}

async function send(t: TestContext, fixture: Fixture, op: Operation, r: Request) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(r.params[name] ?? ''),
  );
  const search = new URLSearchParams(r.query).toString();
  const url = search ? `${path}?${search}` : path;
  const client = r.as === 'session' ? fixture.session : t.newClient();
  const headers = {
    ...(r.html && { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }),
    ...(r.as === 'agent' && { authorization: `Bearer ${fixture.agentToken}` }),
  };
  return client.request(op.method, url, {
    ...(r.body !== undefined && { body: r.body }),
    headers,
    ...(r.as === 'agent' && { origin: null }),
  });
}

const describeResponse = (op: Operation, r: Request, res: RawResponse) =>
  `${op.method} ${op.path} ${JSON.stringify(r.query)} as ${r.as}${r.html ? ' (page)' : ''} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;

async function makeFixture(t: TestContext): Promise<Fixture> {
  const session = t.newClient();
  const { user, account } = await signUpUser(session);
  const org = await session.call(createOrg, {
    body: { name: 'Fuzz org', slug: `fuzz-${account.slug}` },
  });
  const agent = await agentClient(t, session);
  const published = await stageAndPublish(t, agent, {
    manifest: manifestOf('fuzz-bundle'),
    files: { 'README.md': Buffer.from('# Fuzz\n') },
    tarball: Buffer.from('a tarball'),
  });
  await complete(agent, published.bundleId, published.stagingId);
  return {
    session,
    agentToken: agent.token,
    ids: [user.id, account.id, org.body.id, agent.agentId, published.bundleId],
    byName: {
      slug: [published.bundleId, 'new'],
      accountSlug: [account.slug],
      account: [account.slug],
      name: ['fuzz-bundle'],
      version: ['1'],
      path: ['README.md'],
    },
    arbitraries: { cursor: cursorArbitrary },
  };
}

describe.each(databaseKinds)('every endpoint, fuzzed from its schemas, on %s', (kind) => {
  let t: TestContext;
  let operations: Operation[];
  beforeAll(async () => {
    t = await createTestContext(kind);
    const doc = (await t.client.call(openapi)).body as {
      paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
    );
  });
  afterAll(() => t?.close());

  it('names the field in each part of a request, and keeps text with surrogate pairs', async () => {
    const fixture = await makeFixture(t);
    const issuesOf = (res: RawResponse) => {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const { error, issues = [] } = errorOf(res);
      expect(error).toBe('invalid_request');
      return issues.map((i) => [i.path, i.code]);
    };
    const session = fixture.session;
    expect(
      issuesOf(await session.callError(createOrg, { body: { name: 'a\u0000b', slug: 'nul-org' } })),
    ).toEqual([[['body', 'name'], 'invalid_text']]);
    expect(
      issuesOf(await session.callError(listAgents, { query: { accountId: '\u0000' } })),
    ).toEqual([[['query', 'accountId'], 'invalid_text']]);
    expect(
      issuesOf(
        await t.newClient().callError(bundlePage, {
          params: { accountSlug: 'some\u0000one', name: 'bundle' },
        }),
      ),
    ).toEqual([[['params', 'accountSlug'], 'invalid_text']]);
    const agent = { headers: { authorization: `Bearer ${fixture.agentToken}` }, origin: null };
    // A raw path: the staging report is left empty, which the contract's types refuse.
    const staging = await t
      .newClient()
      .post(
        '/api/glamps/stagings',
        { manifest: { ...manifestOf('nul-bundle'), displayName: 'x\ud800' }, report: {} },
        agent,
      );
    expect(issuesOf(staging)).toEqual([[['body', 'manifest', 'displayName'], 'invalid_text']]);
    const emoji = await session.call(createOrg, { body: { name: 'Crabs 🦀', slug: 'emoji-org' } });
    expect(emoji.body.name).toBe('Crabs 🦀');
  });

  it('answers a string that is not well-formed text with 400 invalid_request naming the field', async () => {
    const fixture = await makeFixture(t);
    // Only inputs that carry text can carry text that is not well-formed: a body of booleans
    // alone (the notice switches) would make the generator below search forever.
    const withText = operations.filter(
      (op) =>
        op.parameters.length > 0 || JSON.stringify(op.requestBody ?? null).includes('"string"'),
    );
    expect(withText.length).toBeGreaterThan(40);
    for (const op of withText) {
      await fc.assert(
        fc.asyncProperty(
          requestArbitrary(op, fixture, true).filter((r) => badPathsOf(r).length > 0),
          async (r) => {
            const res = await send(t, fixture, op, r);
            const envelope = ErrorEnvelope.safeParse(res.body).data;
            const named = new Set((envelope?.issues ?? []).map((i) => JSON.stringify(i.path)));
            const missing = badPathsOf(r).filter((p) => !named.has(p));
            expect(
              res.status === 400 && envelope?.error === 'invalid_request' && missing.length === 0,
              `${describeResponse(op, r, res)}; not named: ${missing.join(' ')}`,
            ).toBe(true);
          },
        ),
        { numRuns: RUNS, endOnFailure: true },
      );
    }
  });

  it('answers no input of any endpoint with a 500', async () => {
    const fixture = await makeFixture(t);
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op, fixture, true), async (r) => {
          const res = await send(t, fixture, op, r);
          expect(res.status, describeResponse(op, r, res)).not.toBe(500);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    }
  });

  it('answers no cursor, well-formed or edited, and no query around it with a 500', async () => {
    const fixture = await makeFixture(t);
    const paged = operations.filter((op) => op.parameters.some((p) => p.name === 'cursor'));
    // The search, its page, an account's page and the audit log at least.
    expect(paged.length).toBeGreaterThanOrEqual(4);
    for (const op of paged) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op, fixture, false, ['cursor']), async (r) => {
          const res = await send(t, fixture, op, r);
          expect(res.status, describeResponse(op, r, res)).not.toBe(500);
        }),
        { numRuns: CURSOR_RUNS, endOnFailure: true },
      );
    }
  });
});
