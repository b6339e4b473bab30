import { createOrg, getAgent, listAgents, searchBundles, signOut, signUp } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, callEndpoint, issuesAt } from './client.js';
import { DISK_POLL_MS, POLL_MS, pollWhileTransient } from './queries/transient.js';

const ID = '0b6c2a0e-8a3f-4d55-9b1e-0d7f3a1c2b4e';
const NOW = '2026-11-22T08:00:00.000Z';

/** A fetch that records its calls and answers with one canned response. */
function fakeFetch(status: number, body?: unknown) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}) => {
    calls.push({ url: String(url), init });
    return new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, calls };
}

const agent = {
  id: ID,
  name: 'bot',
  size: 'small',
  region: 'eu',
  billingType: 'metered',
  status: 'running',
  diskOperation: null,
  provider: 'local',
  accountId: ID,
  cohort: 'current',
  subdomain: 'bot-abc123',
  url: 'https://bot-abc123.example',
  specs: { vcpu: 2, ramGb: 4, diskGb: 80 },
  statusReason: null,
  adoptedFrom: null,
  credentialsToSet: [],
  idleStopMinutes: 60,
  backups: { enabled: false, keep: 7, hourUtc: 3 },
  stoppedReason: null,
  createdAt: NOW,
  updatedAt: NOW,
};

describe('callEndpoint', () => {
  it('refuses a body the contract rejects before sending, with the server-shaped issues', async () => {
    const { fetch, calls } = fakeFetch(201, {});
    const error = await callEndpoint(
      signUp,
      { body: { email: 'ada@example.com', password: 'short', name: 'Ada' } },
      { fetch },
    ).catch((e: unknown) => e);
    expect(calls).toEqual([]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).error).toBe('invalid_request');
    expect(issuesAt(error, 'password')).toEqual(['Use at least 8 characters']);
    expect(issuesAt(error, 'email')).toEqual([]);
  });

  it('refuses text the service would refuse (here a NUL) before sending', async () => {
    const { fetch, calls } = fakeFetch(201, {});
    const error = await callEndpoint(
      createOrg,
      { body: { name: 'Acme\u0000', slug: 'acme' } },
      { fetch },
    ).catch((e: unknown) => e);
    expect(calls).toEqual([]);
    expect((error as ApiError).issues.map((issue) => [issue.path, issue.code])).toEqual([
      [['body', 'name'], 'invalid_text'],
    ]);
    expect(issuesAt(error, 'name')).toHaveLength(1);
  });

  it('sends JSON with the method and path of the descriptor, and parses the answer', async () => {
    const org = {
      id: ID,
      slug: 'acme',
      name: 'Acme',
      kind: 'organization',
      role: 'owner',
      subscriptionActive: false,
      subscriptionStatus: 'inactive',
    };
    const { fetch, calls } = fakeFetch(201, { ...org, extra: 'x' });
    const result = await callEndpoint(
      createOrg,
      { body: { name: 'Acme', slug: 'acme' } },
      { fetch },
    );
    expect(result).toEqual(org);
    expect(calls[0]?.url).toBe('/api/orgs');
    expect(calls[0]?.init.method).toBe('POST');
    expect(calls[0]?.init.credentials).toBe('same-origin');
    expect(JSON.parse(calls[0]?.init.body as string)).toEqual({ name: 'Acme', slug: 'acme' });
  });

  it('builds paths and queries from params, leaving out empty query values', async () => {
    const list = fakeFetch(200, [agent]);
    await callEndpoint(listAgents, { query: { accountId: ID } }, { fetch: list.fetch });
    await callEndpoint(listAgents, { query: {} }, { fetch: list.fetch });
    expect(list.calls.map((c) => c.url)).toEqual([`/api/agents?accountId=${ID}`, '/api/agents']);
    const one = fakeFetch(200, agent);
    expect((await callEndpoint(getAgent, { params: { id: ID } }, { fetch: one.fetch })).name).toBe(
      'bot',
    );
    expect(one.calls[0]?.url).toBe(`/api/agents/${ID}`);
  });

  it('repeats a query parameter for each item of a list, and writes numbers as text', async () => {
    const search = fakeFetch(200, { items: [], nextCursor: null });
    await callEndpoint(
      searchBundles,
      { query: { q: 'rain', tag: ['iot', 'garden'], limit: 5 } },
      { fetch: search.fetch },
    );
    await callEndpoint(searchBundles, { query: { tag: [] } }, { fetch: search.fetch });
    expect(search.calls.map((c) => c.url)).toEqual([
      '/api/glamps?q=rain&tag=iot&tag=garden&limit=5',
      '/api/glamps',
    ]);
  });

  it('throws the service error envelope as an ApiError with a readable message', async () => {
    const { fetch } = fakeFetch(409, { error: 'slug_taken' });
    const error = (await callEndpoint(
      createOrg,
      { body: { name: 'Acme', slug: 'acme' } },
      { fetch },
    ).catch((e: unknown) => e)) as ApiError;
    expect(error.error).toBe('slug_taken');
    expect(error.status).toBe(409);
    expect(error.message).toBe('This slug is taken.');
  });

  it("follows the code's sentence with the service's reason when it gives one", async () => {
    const { fetch } = fakeFetch(409, {
      error: 'invalid_state',
      detail: 'cannot clone the Agent while it is being cloned',
    });
    const error = (await callEndpoint(getAgent, { params: { id: ID } }, { fetch }).catch(
      (e: unknown) => e,
    )) as ApiError;
    expect(error.detail).toBe('cannot clone the Agent while it is being cloned');
    expect(error.message).toBe(
      'This is not possible in its current state. Cannot clone the Agent while it is being cloned.',
    );
  });

  it('keeps server issues at their paths, and says a request-wide one as the message', async () => {
    const issues = [
      { path: ['body', 'rules', 1, 'port'], message: 'Bad port', code: 'custom' },
      { path: ['body'], message: 'Send the body as application/json', code: 'invalid_json' },
    ];
    const { fetch } = fakeFetch(400, { error: 'invalid_request', issues });
    const error = await callEndpoint(
      createOrg,
      { body: { name: 'Acme', slug: 'acme' } },
      { fetch },
    ).catch((e: unknown) => e);
    expect(issuesAt(error, 'rules', 1)).toEqual(['Bad port']);
    expect(issuesAt(error, 'rules', 0)).toEqual([]);
    expect((error as ApiError).message).toBe('Send the body as application/json');
  });

  it('refuses an answer that does not match the contract, and handles bodiless answers', async () => {
    const bad = fakeFetch(200, { ...agent, status: 'flying' });
    const error = await callEndpoint(getAgent, { params: { id: ID } }, { fetch: bad.fetch }).catch(
      (e: unknown) => e,
    );
    expect((error as ApiError).error).toBe('invalid_response');
    const empty = fakeFetch(204);
    expect(await callEndpoint(signOut, {}, { fetch: empty.fetch })).toBeUndefined();
  });

  it('reports a network failure as network_error', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    const error = await callEndpoint(signOut, {}, { fetch }).catch((e: unknown) => e);
    expect((error as ApiError).error).toBe('network_error');
  });
});

describe('pollWhileTransient', () => {
  it('polls while any machine is in a transient state, and stops when all have settled', () => {
    expect(pollWhileTransient(undefined)).toBe(false);
    expect(pollWhileTransient([{ status: 'running' }, { status: 'stopped' }])).toBe(false);
    expect(pollWhileTransient([{ status: 'running' }, { status: 'starting' }])).toBe(250);
    expect(pollWhileTransient({ status: 'provisioning' })).toBe(POLL_MS);
    expect(pollWhileTransient({ status: 'error' })).toBe(false);
  });

  it('polls while a snapshot or a restore runs on a settled machine, and stops when it ends', () => {
    expect(pollWhileTransient({ status: 'running', diskOperation: 'snapshot' })).toBe(DISK_POLL_MS);
    expect(pollWhileTransient([{ status: 'stopped', diskOperation: 'restore' }])).toBe(
      DISK_POLL_MS,
    );
    expect(pollWhileTransient({ status: 'stopping', diskOperation: 'snapshot' })).toBe(POLL_MS);
    expect(pollWhileTransient({ status: 'stopped', diskOperation: null })).toBe(false);
  });
});
