import { createAgent, createPlainVm, getAgent, listPlainVms } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createIncusProject, INCUS_SOCKET, incusContext } from '../../test/incus.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import type { Instance } from '../adapters/compute/incus/incus-instance.js';

// The detail reports the limits the incus driver gave the machine (INCUS_SIZE_FACTOR=0.25 makes
// a small EU machine 1 vCPU, 1 GiB and 20 GiB, not the size table's 2, 4 GB and 80 GB), and they
// are the ones on the instance.

describe('Machine limits on Incus', { timeout: 300_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let t: TestContext;
  let owner: TestClient;
  let incus: IncusClient;

  beforeAll(async () => {
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    // incusContext sets INCUS_SIZE_FACTOR=0.25.
    t = await incusContext(project.name)({});
    owner = t.newClient();
    await signUpUser(owner);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    incus?.close();
    await project?.remove();
  });

  type PlainVmInput = z.input<NonNullable<(typeof createPlainVm)['body']>>;
  const SCALED_SMALL_EU = { vcpu: 1, ramMb: 1024, diskGb: 20 };

  it("reports an Agent's actual limits beside its size's specs, as the instance has them", async () => {
    const body = { name: 'limited', size: 'small', region: 'eu', billingType: 'metered' } as const;
    const agent = (await owner.call(createAgent, { body })).body;
    expect(agent.specs).toEqual({ vcpu: 2, ramGb: 4, diskGb: 80 });
    expect(agent.limits).toEqual(SCALED_SMALL_EU);
    const detail = await owner.call(getAgent, { params: { id: agent.id } });
    expect(detail.body.limits).toEqual(SCALED_SMALL_EU);

    const instance = await waitFor(
      async (): Promise<Instance | undefined> => {
        const found = await incus
          .call<Instance>('GET', `/1.0/instances/svc-${agent.id}`)
          .catch(() => undefined);
        return found?.config?.['limits.cpu'] !== undefined ? found : undefined;
      },
      // The driver makes the instance after copying the Agent image: a minute or more on a busy host.
      240_000,
      `the instance of ${agent.id}`,
    );
    expect(instance.config['limits.cpu']).toBe(String(agent.limits?.vcpu));
    expect(instance.config['limits.memory']).toBe(`${agent.limits?.ramMb}MiB`);
    expect(instance.devices.root?.size).toBe(`${agent.limits?.diskGb}GiB`);
  });

  it("reports a Plain VM's limits for its tier", async () => {
    const body: PlainVmInput = {
      name: 'limited-vm',
      tier: 'medium',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
    };
    const vm = (await owner.call(createPlainVm, { body })).body;
    expect(vm.specs).toEqual({ vcpu: 4, ramGb: 8, diskGb: 160 });
    expect(vm.limits).toEqual({ vcpu: 1, ramMb: 2048, diskGb: 40 });
    const listed = (await owner.call(listPlainVms)).body;
    expect(listed.find((each) => each.id === vm.id)?.limits).toEqual(vm.limits);
  });
});
