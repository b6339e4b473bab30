import { addVaultEntry, deleteVaultEntry, listVaultEntries } from '@svc/contract';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { TestClient } from './test-client.js';

const ID = '0b6c1f3e-8a52-4c1e-9f4a-2d7e5b9c3a10';
const entry = {
  id: ID,
  accountId: ID,
  label: 'laptop',
  type: 'ssh-ed25519',
  fingerprintSha256: 'SHA256:abc',
  createdAt: '2026-01-01T00:00:00.000Z',
};
const input = { body: { type: 'ssh_key' as const, label: 'laptop', value: 'ssh-ed25519 AAAA' } };

/** An app answering the Vault's paths as told, and keeping what it was sent. */
function app(answer: { status: number; body: unknown }) {
  const seen: { method: string; url: string; body: string; contentType: string | null }[] = [];
  const hono = new Hono().all('*', async (c) => {
    seen.push({
      method: c.req.method,
      url: c.req.url,
      body: await c.req.text(),
      contentType: c.req.header('content-type') ?? null,
    });
    return c.json(answer.body, answer.status as 200);
  });
  return { seen, client: new TestClient(hono, 'http://dashboard.test') };
}

describe('TestClient descriptor calls', () => {
  it('sends the request the descriptor describes and keeps every field of the answer', async () => {
    const { seen, client } = app({ status: 201, body: { ...entry, extra: 'kept' } });
    const res = await client.call(addVaultEntry, input);
    expect(res.body.fingerprintSha256).toBe('SHA256:abc');
    // Nothing is stripped: a test can still see a field the contract does not name.
    expect(res.body).toHaveProperty('extra', 'kept');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: 'http://localhost/api/vault',
      contentType: 'application/json',
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual(input.body);
    await client.call(deleteVaultEntry, { params: { id: 'a/b' } }).catch(() => undefined);
    expect(seen[1]?.url).toBe('http://localhost/api/vault/a%2Fb');
  });

  it('call fails on another status or a body the schema refuses; callError on a success', async () => {
    const refused = app({ status: 409, body: { error: 'duplicate_key' } }).client;
    await expect(refused.call(addVaultEntry, input)).rejects.toThrow(
      'POST /api/vault answered 409, not 201: {"error":"duplicate_key"}',
    );
    expect((await refused.callError(addVaultEntry, input)).body.error).toBe('duplicate_key');
    const wrong = app({ status: 200, body: [{ id: 1 }] }).client;
    await expect(wrong.call(listVaultEntries)).rejects.toThrow('a body its schema refuses');
    const ok = app({ status: 201, body: entry }).client;
    await expect(ok.callError(addVaultEntry, input)).rejects.toThrow('not an error envelope');
    expect(await ok.send(addVaultEntry, input)).toMatchObject({ status: 201, body: entry });
  });
});

// Type tests: `tsc` (npm run typecheck) fails if any of these lines stops being an error.
export async function typeTests(client: TestClient) {
  // @ts-expect-error a body field the contract does not have (`name` for `label`)
  await client.call(addVaultEntry, { body: { type: 'ssh_key', name: 'laptop', value: 'x' } });
  const res = await client.call(addVaultEntry, input);
  // @ts-expect-error a response field the contract does not have (`fingerprint`)
  res.body.fingerprint;
  // @ts-expect-error a path parameter the endpoint needs is missing
  await client.call(deleteVaultEntry, { params: {} });
  // @ts-expect-error the error envelope has no `message` (it is `detail`)
  (await client.callError(addVaultEntry, input)).body.message;
  return res.body.fingerprintSha256;
}
