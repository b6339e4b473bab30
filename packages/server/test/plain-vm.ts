import {
  addVaultEntry,
  createPlainVm as createPlainVmEndpoint,
  getPlainVm,
  type PlainVm,
} from '@svc/contract';
import { expect } from 'vitest';
import type { TestClient } from './test-client.js';
import { waitFor } from './wait.js';

/**
 * The create body of a metered Plain VM of the tests (debian-12, small, eu): password login, or
 * the Vault entries given.
 */
export const plainVmBody = (name: string, vaultEntryIds?: readonly string[]) => ({
  name,
  tier: 'small' as const,
  region: 'eu' as const,
  osImageKey: 'debian-12' as const,
  billingType: 'metered' as const,
  access: vaultEntryIds
    ? { passwordEnabled: false, vaultEntryIds: [...vaultEntryIds] }
    : { passwordEnabled: true, vaultEntryIds: [] },
});

/** Asks for a Plain VM through the API (debian-12, small, eu, password login); its id. */
export async function createPlainVm(client: TestClient, name: string): Promise<string> {
  return (await client.call(createPlainVmEndpoint, { body: plainVmBody(name) })).body.id;
}

/**
 * A Plain VM made through the API (debian-12, small, eu) that its default user reaches with this
 * key only (a Vault entry), once it runs; fails with its status reason if it ends in `error`.
 */
export async function runningPlainVmWithKey(
  client: TestClient,
  name: string,
  publicKeyLine: string,
  withinMs = 90_000,
): Promise<PlainVm> {
  const vault = await client.call(addVaultEntry, {
    body: { type: 'ssh_key', label: name, value: publicKeyLine },
  });
  const created = await client.call(createPlainVmEndpoint, {
    body: plainVmBody(name, [vault.body.id]),
  });
  const id = created.body.id;
  const vm = await waitFor(
    async () => {
      const current = (await client.call(getPlainVm, { params: { id } })).body;
      return ['running', 'error'].includes(current.status) && current;
    },
    withinMs,
    'running',
  );
  expect(vm.status, `status reason: ${vm.statusReason}`).toBe('running');
  return vm;
}

/** A Plain VM made through the API (debian-12, small, eu, password login), once it runs. */
export async function runningPlainVm(client: TestClient, name: string, withinMs: number) {
  const id = await createPlainVm(client, name);
  await waitFor(
    async () => (await client.call(getPlainVm, { params: { id } })).body.status === 'running',
    withinMs,
    'running',
  );
  return id;
}
