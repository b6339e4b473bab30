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
