import { describe, expect, it } from 'vitest';
import { getAgent } from './agents.js';
import { searchBundles } from './bundles.js';
import {
  CallError,
  callEndpoint,
  endpointRequest,
  readAnswer,
  type Transport,
} from './endpoint-call.js';
import { addVaultEntry, listVaultEntries } from './vault.js';

const ID = '0b6c1f3e-8a52-4c1e-9f4a-2d7e5b9c3a10';

/** A transport that answers one status and body, and keeps what it was sent. */
function answering(status: number, body: unknown) {
  const sent: { url: string; init: Parameters<Transport>[1] }[] = [];
  const transport: Transport = async (url, init) => {
    sent.push({ url, init });
    return { status, text: async () => (typeof body === 'string' ? body : JSON.stringify(body)) };
  };
  return { sent, transport };
}

const vaultEntry = {
  id: ID,
  accountId: ID,
  type: 'ssh-ed25519',
  label: 'laptop',
  fingerprintSha256: 'SHA256:abc',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('endpointRequest', () => {
  it('fills the path template, encodes each value, and writes the body as JSON', () => {
    expect(endpointRequest(getAgent, { params: { id: 'a/b c' } }).url).toBe(
      '/api/agents/a%2Fb%20c',
    );
    const request = endpointRequest(addVaultEntry, {
      body: { type: 'ssh_key', label: 'laptop', value: 'ssh-ed25519 AAAA' },
    });
    expect(request).toMatchObject({
      method: 'POST',
      url: '/api/vault',
      headers: { 'content-type': 'application/json' },
    });
    expect(JSON.parse(request.body ?? '')).toEqual({
      type: 'ssh_key',
      label: 'laptop',
      value: 'ssh-ed25519 AAAA',
    });
  });

  it('repeats a list in the query and leaves empty values out', () => {
    expect(endpointRequest(searchBundles, { query: { tag: ['a', 'b'], q: '' } }).url).toBe(
      '/api/glamps?tag=a&tag=b',
    );
    expect(endpointRequest(listVaultEntries).url).toBe('/api/vault');
  });
});

describe('readAnswer and callEndpoint', () => {
  it('parses the success body with the response schema', async () => {
    const { sent, transport } = answering(201, vaultEntry);
    const entry = await callEndpoint(
      addVaultEntry,
      { body: { type: 'ssh_key', label: 'laptop', value: 'ssh-ed25519 AAAA' } },
      { transport, baseUrl: 'https://svc.test/' },
    );
    expect(entry.fingerprintSha256).toBe('SHA256:abc');
    expect(sent[0]?.url).toBe('https://svc.test/api/vault');
  });

  it("throws the envelope's code, detail and issues as a CallError", async () => {
    const { transport } = answering(409, { error: 'duplicate_key', detail: 'already there' });
    const error = await callEndpoint(
      addVaultEntry,
      { body: { type: 'ssh_key', label: 'laptop', value: 'ssh-ed25519 AAAA' } },
      { transport },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallError);
    expect(error).toMatchObject({ error: 'duplicate_key', status: 409, detail: 'already there' });
  });

  it('calls a success the schema refuses, or an error without the envelope, invalid_response', () => {
    expect(readAnswer(getAgent, 200, '{"id":1}')).toMatchObject({
      ok: false,
      failure: { error: 'invalid_response', status: 200 },
    });
    expect(readAnswer(getAgent, 502, '<html>Bad gateway</html>')).toMatchObject({
      ok: false,
      failure: { error: 'invalid_response', status: 502 },
    });
  });

  it('names a transport that threw network_error, with its cause', async () => {
    const refused = new Error('connect ECONNREFUSED');
    const error = await callEndpoint(
      getAgent,
      { params: { id: ID } },
      {
        transport: () => Promise.reject(refused),
      },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'network_error', status: 0, cause: refused });
  });
});

// Type tests: `tsc` (npm run typecheck) fails if any of these lines stops being an error.
export async function typeTests(transport: Transport) {
  const entry = await callEndpoint(
    addVaultEntry,
    // @ts-expect-error a body field the contract does not have (`name` for `label`)
    { body: { type: 'ssh_key', name: 'laptop', value: 'ssh-ed25519 AAAA' } },
    { transport },
  );
  // @ts-expect-error a response field the contract does not have (`fingerprint` for `fingerprintSha256`)
  entry.fingerprint;
  // @ts-expect-error an endpoint with path parameters needs them
  endpointRequest(getAgent);
  return entry.fingerprintSha256;
}
