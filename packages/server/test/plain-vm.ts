import type { PlainVm } from '@svc/contract';
import { expect } from 'vitest';
import type { TestClient } from './test-client.js';
import { waitFor } from './wait.js';

/** Asks for a Plain VM through the API (debian-12, small, eu, password login); its id. */
export async function createPlainVm(client: TestClient, name: string): Promise<string> {
  const res = await client.post('/api/plain-vms', {
    name,
    tier: 'small',
    region: 'eu',
    osImageKey: 'debian-12',
    billingType: 'metered',
    access: { passwordEnabled: true, vaultEntryIds: [] },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
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
  const vault = await client.post('/api/vault', {
    type: 'ssh_key',
    label: name,
    value: publicKeyLine,
  });
  expect(vault.status).toBe(201);
  const created = await client.post('/api/plain-vms', {
    name,
    tier: 'small',
    region: 'eu',
    osImageKey: 'debian-12',
    billingType: 'metered',
    access: { passwordEnabled: false, vaultEntryIds: [vault.body.id] },
  });
  expect(created.status).toBe(201);
  const id = (created.body as PlainVm).id;
  const vm = await waitFor(
    async () => {
      const current = (await client.get(`/api/plain-vms/${id}`)).body as PlainVm;
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
    async () => (await client.get(`/api/plain-vms/${id}`)).body.status === 'running',
    withinMs,
    'running',
  );
  return id;
}
