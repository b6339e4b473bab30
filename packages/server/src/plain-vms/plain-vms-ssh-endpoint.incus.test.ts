import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getPlainVm } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../test/incus.js';
import { keyPair, ssh } from '../../test/openssh.js';
import { createOutsideClient, type OutsideClient } from '../../test/outside-client.js';
import { runningPlainVmWithKey } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import { IncusComputeDriver } from '../adapters/compute/incus/incus-compute-driver.js';
import { reconcilePlainVms } from './plain-vms.jobs.js';

// The Plain VM's `ssh` field follows INCUS_PUBLIC_ADDRESS on the real Incus daemon: a VM made by
// a service without the variable is reported at its public port once a service with it has
// reconciled, moves with the address, and goes back to the bridge (its port entry removed) when
// the variable is unset. Each service after the first is its driver and the Plain VM reconciler's
// pass over the first's database, as another process started with other settings runs it.

const PORTS = { first: 22200, last: 22299 };

interface ForwardPort {
  description: string;
  listen_port: string;
}

describe('a Plain VM’s ssh field on Incus follows INCUS_PUBLIC_ADDRESS', {
  timeout: 300_000,
}, () => {
  let t: TestContext;
  let client: TestClient;
  let incus: IncusClient;
  let outside: OutsideClient[] = [];
  let dir: string;
  let key: { file: string; publicLine: string };
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  const drivers: IncusComputeDriver[] = [];

  beforeAll(async () => {
    outside = [await createOutsideClient(), await createOutsideClient()];
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    dir = await mkdtemp(path.join(tmpdir(), 'svc-ssh-endpoint-'));
    key = await keyPair(dir, 'laptop');
    // No INCUS_PUBLIC_ADDRESS: the VM is made reachable on the bridge only.
    t = await createTestContext('pglite', {
      env: {
        COMPUTE_DRIVER: 'incus',
        INCUS_SOCKET,
        INCUS_PROJECT: project.name,
        INCUS_SIZE_FACTOR: '0.25',
      },
      overrides: { compute: undefined },
    });
    client = t.newClient();
    await signUpUser(client);
  });

  afterAll(async () => {
    for (const driver of drivers) await driver.close();
    await t?.close();
    await project?.remove();
    incus?.close();
    for (const each of outside) await each.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The driver of a service in this project with this INCUS_PUBLIC_ADDRESS (or none). */
  const serviceWith = async (publicAddress?: string) => {
    const driver = new IncusComputeDriver(
      incusDriverOptions(project.name, {
        ...(publicAddress && { publicSsh: { addresses: { '*': publicAddress }, ports: PORTS } }),
      }),
      pino({ level: 'silent' }),
    );
    drivers.push(driver);
    await driver.connect();
    return driver;
  };
  const reconcileBy = (driver: IncusComputeDriver) =>
    reconcilePlainVms({
      database: t.ctx.database,
      clock: t.ctx.clock,
      compute: driver,
      log: pino({ level: 'silent' }),
    });
  /** The port entries of `id` on the forward of each outside client's address. */
  const entriesOf = async (id: string) =>
    Promise.all(
      outside.map(async ({ hostAddress }) => {
        const ports = await incus
          .call<{ ports: ForwardPort[] }>('GET', `/1.0/networks/incusbr0/forwards/${hostAddress}`)
          .then(
            (forward) => forward.ports ?? [],
            () => [],
          );
        return ports.filter((entry) => entry.description.includes(id)).map((e) => e.listen_port);
      }),
    );
  const sshField = async (id: string) =>
    (await client.call(getPlainVm, { params: { id } })).body.ssh;
  const fromOutside = (at: OutsideClient, port: number) =>
    ssh(port, 'debian', key.file, 'hostname', at.hostAddress, at.netns);

  it('reports the public host and port once reconciled with the variable, moves with it, and goes back to the bridge without it', async () => {
    const vm = await runningPlainVmWithKey(client, 'endpoint-box', key.publicLine);
    const { id } = vm;
    const bridge = { host: vm.ipv4, port: 22 };
    expect(vm.ssh).toEqual(bridge);
    // From here on only the other services' passes act (the first's would undo theirs).
    await t.ctx.jobs.stop();
    const [first, second] = outside as [OutsideClient, OutsideClient];

    // Set: the VM gets a port on the public address, and the API reports it there.
    const withFirst = await serviceWith(first.hostAddress);
    await reconcileBy(withFirst);
    const atFirst = await sshField(id);
    expect(atFirst?.host).toBe(first.hostAddress);
    const port = atFirst?.port as number;
    expect(port).toBeGreaterThanOrEqual(PORTS.first);
    expect(port).toBeLessThanOrEqual(PORTS.last);
    expect(await entriesOf(id)).toEqual([[String(port)], []]);
    await waitFor(async () => (await fromOutside(first, port)).code === 0, 60_000, 'ssh first');

    // Changed: the entry moves to the new address (its port kept), and so does the API's field.
    await reconcileBy(await serviceWith(second.hostAddress));
    expect(await sshField(id)).toEqual({ host: second.hostAddress, port });
    expect(await entriesOf(id)).toEqual([[], [String(port)]]);
    // As at first, the moved entry may take a moment to answer (a loaded host was seen to).
    await waitFor(async () => (await fromOutside(second, port)).code === 0, 60_000, 'ssh second');
    expect((await fromOutside(second, port)).stdout).toBe('endpoint-box\n');

    // Unset: no public port forwards to the VM any more; the API reports the bridge again.
    const without = await serviceWith(undefined);
    await reconcileBy(without);
    expect(await entriesOf(id)).toEqual([[], []]);
    expect(await sshField(id)).toEqual(bridge);

    // A VM destroyed by a service without the variable loses the entry made while it was set.
    await reconcileBy(withFirst);
    expect(await entriesOf(id)).toEqual([[String(port)], []]);
    await without.deleteServer(id);
    expect(await entriesOf(id)).toEqual([[], []]);
  });
});
