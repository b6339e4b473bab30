import type { BundleManifest } from '@svc/contract';
import { agentClientOf, manifestOf, publishSimple } from './bundle-test-helpers.js';
import type { TestClient } from './test-client.js';
import type { TestContext } from './test-context.js';
import { waitFor } from './wait.js';

/**
 * What the dashboard's pages show about an account with things in it: a metered Agent that has
 * published a bundle, and a metered Plain VM, both in the client's personal account and running.
 */
export async function runningMachines(
  t: TestContext,
  owner: TestClient,
  names: { agent: string; vm: string; bundle: string; bundleManifest?: Partial<BundleManifest> },
): Promise<{ agentId: string; vmId: string }> {
  const agent = await owner.post('/api/agents', {
    name: names.agent,
    size: 'small',
    region: 'eu',
    billingType: 'metered',
  });
  const agentId: string = agent.body.id;
  await publishSimple(
    t,
    agentClientOf(t, agentId),
    manifestOf(names.bundle, names.bundleManifest ?? {}),
  );
  const vm = await owner.post('/api/plain-vms', {
    name: names.vm,
    tier: 'small',
    region: 'eu',
    osImageKey: 'debian-12',
    billingType: 'metered',
    access: { passwordEnabled: true, vaultEntryIds: [] },
  });
  const vmId: string = vm.body.id;
  const running = async (path: string) => (await owner.get(path)).body.status === 'running';
  await waitFor(() => running(`/api/agents/${agentId}`), 30_000, 'the Agent running');
  await waitFor(() => running(`/api/plain-vms/${vmId}`), 30_000, 'the VM running');
  return { agentId, vmId };
}
