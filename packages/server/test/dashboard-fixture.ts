import {
  type BundleManifest,
  createAgent,
  createPlainVm,
  getAgent,
  getPlainVm,
} from '@svc/contract';
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
  const agent = await owner.call(createAgent, {
    body: { name: names.agent, size: 'small', region: 'eu', billingType: 'metered' },
  });
  const agentId = agent.body.id;
  await publishSimple(
    t,
    agentClientOf(t, agentId),
    manifestOf(names.bundle, names.bundleManifest ?? {}),
  );
  const vm = await owner.call(createPlainVm, {
    body: {
      name: names.vm,
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
    },
  });
  const vmId = vm.body.id;
  await waitFor(
    async () => (await owner.call(getAgent, { params: { id: agentId } })).body.status === 'running',
    30_000,
    'the Agent running',
  );
  await waitFor(
    async () => (await owner.call(getPlainVm, { params: { id: vmId } })).body.status === 'running',
    30_000,
    'the VM running',
  );
  return { agentId, vmId };
}
