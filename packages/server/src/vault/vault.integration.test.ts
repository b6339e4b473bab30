import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addVaultEntry, createOrg, deleteVaultEntry, listVaultEntries } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-vault-'));
let n = 0;
function keyPair() {
  n += 1;
  const file = path.join(dir, `key${n}`);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `key${n}@test`, '-f', file]);
  const publicLine = readFileSync(`${file}.pub`, 'utf8').trim();
  const fingerprint = execFileSync('ssh-keygen', ['-lf', `${file}.pub`], {
    encoding: 'utf8',
  }).split(' ')[1];
  return { publicLine, privateKey: readFileSync(file, 'utf8'), fingerprint };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(databaseKinds)('Vault on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let personalId: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    owner = t.newClient();
    personalId = (await signUpUser(owner)).account.id;
  });
  afterAll(() => t?.close());

  const entry = (value: string, accountId?: string) => ({
    body: { type: 'ssh_key' as const, label: 'laptop', value, ...(accountId && { accountId }) },
  });
  const add = (value: string, accountId?: string, as = owner) =>
    as.send(addVaultEntry, entry(value, accountId));

  it('adds a key: 201 with its type and ssh-keygen fingerprint; lists and deletes it', async () => {
    const key = keyPair();
    const res = await owner.call(addVaultEntry, entry(key.publicLine));
    expect(res).toMatchObject({
      status: 201,
      body: {
        accountId: personalId,
        label: 'laptop',
        type: 'ssh-ed25519',
        fingerprintSha256: key.fingerprint,
      },
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const ids = async () => (await owner.call(listVaultEntries)).body.map((e) => e.id);
    expect(await ids()).toContain(res.body.id);
    const inAccount = await owner.call(listVaultEntries, { query: { accountId: personalId } });
    expect(inAccount.body).toContainEqual(res.body);
    const byId = { params: { id: res.body.id } };
    expect((await owner.call(deleteVaultEntry, byId)).status).toBe(204);
    expect(await ids()).not.toContain(res.body.id);
    expect((await owner.callError(deleteVaultEntry, byId)).status).toBe(404);
  });

  it('refuses the same key twice in one account (409), whatever its comment, but not in another account', async () => {
    const key = keyPair();
    expect((await add(key.publicLine)).status).toBe(201);
    const recommented = key.publicLine.replace(/\S+$/, 'other-comment');
    const again = { body: { ...entry(recommented).body, label: 'again' } };
    expect(await owner.send(addVaultEntry, again)).toMatchObject({
      status: 409,
      body: { error: 'duplicate_key' },
    });
    const orgInput = { body: { name: 'Keys', slug: `vault-${kind}` } };
    const org = (await owner.call(createOrg, orgInput)).body.id;
    expect((await add(key.publicLine, org)).status).toBe(201);
  });

  it('refuses a private key with 400 and never stores or logs it', async () => {
    const key = keyPair();
    t.logs.lines.length = 0;
    const res = await owner.callError(addVaultEntry, entry(key.privateKey));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_public_key');
    expect(res.body.issues?.[0]?.path).toEqual(['body', 'value']);
    expect(JSON.stringify(res.body)).not.toContain('PRIVATE KEY-----\n');
    const stored = await t.ctx.database.db.selectFrom('vaultEntries').select('publicKey').execute();
    const secretLine = key.privateKey.split('\n')[1] as string;
    expect(stored.some((row) => row.publicKey.includes(secretLine))).toBe(false);
    expect(t.logs.text()).not.toContain(secretLine);
  });

  it.each([
    [{ value: 'ssh-ed25519 AAAA' }, 'invalid_public_key'],
    [{ value: 'ssh-dss AAAAB3NzaC1kc3MAAACBAP' }, 'invalid_public_key'],
    [{ label: '' }, 'invalid_request'],
    [{ type: 'gpg_key' }, 'invalid_request'],
  ])('answers %j with 400 %s', async (override, error) => {
    // A raw path: some of these bodies are ones the contract's types refuse to write.
    const body = { type: 'ssh_key', label: 'laptop', value: keyPair().publicLine, ...override };
    const res = await owner.post('/api/vault', body);
    expect(res).toMatchObject({ status: 400, body: { error } });
  });

  it('keeps other accounts out (404)', async () => {
    const added = (await owner.call(addVaultEntry, entry(keyPair().publicLine))).body;
    const stranger = t.newClient();
    await signUpUser(stranger);
    const byId = { params: { id: added.id } };
    expect((await stranger.callError(deleteVaultEntry, byId)).status).toBe(404);
    const inAccount = { query: { accountId: personalId } };
    expect((await stranger.callError(listVaultEntries, inAccount)).status).toBe(404);
    expect((await add(keyPair().publicLine, personalId, stranger)).status).toBe(404);
    expect((await stranger.call(listVaultEntries)).body).toEqual([]);
  });
});
