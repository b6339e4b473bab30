import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DEFAULT_FIREWALL_RULES,
  deletePlainVm,
  type FirewallRuleInput,
  getPlainVm,
  putPlainVmFirewall,
} from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp } from '../../test/clean-up.js';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../test/incus.js';
import { keyPair, ssh } from '../../test/openssh.js';
import { createOutsideClient, type OutsideClient } from '../../test/outside-client.js';
import { runningPlainVmWithKey } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import { IncusComputeDriver } from '../adapters/compute/incus/incus-compute-driver.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';

// SSH to a Plain VM from outside the host (`INCUS_PUBLIC_ADDRESS`), through the HTTP API on the
// real Incus daemon: the outside client is a network namespace of the test's own, joined to the
// host by a veth pair whose host end holds the public address; it has no route to the bridge.

const PORTS = { first: 22100, last: 22199 };

interface ForwardPort {
  description: string;
  protocol: string;
  listen_port: string;
  target_address: string;
  target_port?: string;
}

describe('Plain VMs reached by SSH from outside on Incus', { timeout: 300_000 }, () => {
  let t: TestContext;
  let client: TestClient;
  let incus: IncusClient;
  let outside: OutsideClient;
  let dir: string;
  let key: { file: string; publicLine: string };
  let project: Awaited<ReturnType<typeof createIncusProject>>;

  beforeAll(async () => {
    outside = await createOutsideClient();
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    dir = await mkdtemp(path.join(tmpdir(), 'svc-outside-ssh-'));
    key = await keyPair(dir, 'laptop');
    t = await createTestContext('pglite', {
      env: {
        COMPUTE_DRIVER: 'incus',
        INCUS_SOCKET,
        INCUS_PROJECT: project.name,
        INCUS_SIZE_FACTOR: '0.25',
        INCUS_PUBLIC_ADDRESS: outside.hostAddress,
        INCUS_SSH_PORTS: `${PORTS.first}-${PORTS.last}`,
      },
      overrides: { compute: undefined },
    });
    client = t.newClient();
    await signUpUser(client);
  });

  afterAll(() =>
    cleanUp({
      context: () => t?.close(),
      project: () => project?.remove(),
      incus: () => incus?.close(),
      outside: () => outside?.remove(),
      dir: () => dir && rm(dir, { recursive: true, force: true }),
    }),
  );

  const forwardPath = () => `/1.0/networks/incusbr0/forwards/${outside.hostAddress}`;
  /** The port entries of the public address's forward (none when it has no forward). */
  const entries = async (): Promise<ForwardPort[]> => {
    try {
      return (await incus.call<{ ports: ForwardPort[] }>('GET', forwardPath())).ports ?? [];
    } catch {
      return [];
    }
  };
  const setEntries = async (change: (ports: ForwardPort[]) => ForwardPort[]) => {
    const { metadata, etag } = await incus.request<{
      description: string;
      config: Record<string, string>;
      ports: ForwardPort[];
    }>('GET', forwardPath());
    await incus.call('PUT', forwardPath(), {
      body: {
        description: metadata.description,
        config: metadata.config,
        ports: change(metadata.ports),
      },
      ...(etag && { headers: { 'If-Match': etag } }),
    });
  };
  const reconcile = () => t.ctx.jobs.enqueue(t.ctx.database.db, PLAIN_VM.jobs.reconcile, {});
  const fromOutside = (port: number, command = 'true') =>
    ssh(port, 'debian', key.file, command, outside.hostAddress, outside.netns);

  it('reaches the VM at the public address and port the API reports; its firewall decides by the client address', async () => {
    const vm = await runningPlainVmWithKey(client, 'outside-box', key.publicLine);
    const { id } = vm;
    expect(vm.ssh?.host).toBe(outside.hostAddress);
    const port = vm.ssh?.port as number;
    expect(port).toBeGreaterThanOrEqual(PORTS.first);
    expect(port).toBeLessThanOrEqual(PORTS.last);
    const own = (await entries()).filter((entry) => entry.description.includes(id));
    expect(own).toEqual([
      expect.objectContaining({
        protocol: 'tcp',
        listen_port: String(port),
        target_address: vm.ipv4,
        target_port: '22',
      }),
    ]);

    // The VM sees the outside client's own address (the forward does not rewrite the source).
    // Each try a session of its own: another test's change of the bridge's ACLs takes the
    // bridge's address off for ~12 ms, and a connection made then fails (255) and is made again.
    const seen = await waitFor(
      async () => {
        const res = await fromOutside(port, 'hostname; echo "$SSH_CLIENT" | cut -d" " -f1');
        return res.code === 0 ? res : undefined;
      },
      60_000,
      'ssh from outside',
    );
    expect(seen).toEqual({ code: 0, stdout: `outside-box\n${outside.clientAddress}\n` });

    // SSH from the host's bridge address only: the outside client is refused, the host is not.
    const params = { id };
    const put = (rules: FirewallRuleInput[]) =>
      client.call(putPlainVmFirewall, { params, body: { rules } });
    await put([{ protocol: 'tcp', port: '22', sourceIps: ['10.77.0.1/32'] }]);
    await waitFor(async () => (await fromOutside(port)).code === 255, 30_000, 'outside refused');
    expect((await ssh(22, 'debian', key.file, 'true', vm.ipv4 as string)).code).toBe(0);
    // Open to all again: the outside client is admitted.
    await put([{ protocol: 'tcp', port: '22', sourceIps: ['0.0.0.0/0'] }]);
    await waitFor(async () => (await fromOutside(port)).code === 0, 30_000, 'outside admitted');

    // The reconciler puts back an entry lost by hand (on the same port), and removes one whose
    // machine is gone.
    await setEntries((ports) => ports.filter((entry) => !entry.description.includes(id)));
    expect((await fromOutside(port)).code).toBe(255);
    const orphanId = randomUUID();
    await setEntries((ports) => [
      ...ports,
      {
        description: `svc ssh: machine ${orphanId} project ${project.name}`,
        protocol: 'tcp',
        listen_port: String(PORTS.last),
        target_address: vm.ipv4 as string,
        target_port: '22',
      },
    ]);
    await reconcile();
    await waitFor(
      async () => {
        const now = await entries();
        const back = now.some((e) => e.description.includes(id) && e.listen_port === String(port));
        return back && !now.some((e) => e.description.includes(orphanId));
      },
      60_000,
      'entry back, orphan gone',
    );
    await waitFor(async () => (await fromOutside(port)).code === 0, 30_000, 'ssh after repair');
    expect((await client.call(getPlainVm, { params })).body.ssh).toEqual(vm.ssh);

    // Destroying the VM frees its port.
    expect((await client.call(deletePlainVm, { params })).body.status).toBe('destroying');
    await waitFor(async () => (await client.send(getPlainVm, { params })).status === 404, 60_000);
    expect((await entries()).filter((entry) => entry.description.includes(id))).toEqual([]);
  });

  it('gives VMs made at once by two processes a port each, and frees both', async () => {
    // Two drivers, as two service processes sharing the daemon: each its own client and locks.
    const options = incusDriverOptions(project.name, {
      publicSsh: { addresses: { '*': outside.hostAddress }, ports: PORTS },
    });
    const drivers = [0, 1].map(() => new IncusComputeDriver(options, pino({ level: 'silent' })));
    const ids = [randomUUID(), randomUUID()];
    try {
      await Promise.all(drivers.map((driver) => driver.connect()));
      const servers = await Promise.all(
        ids.map((id, i) =>
          (drivers[i] as IncusComputeDriver).createServer({
            id,
            size: 'small',
            region: 'eu',
            image: 'debian-12',
            bootstrapEnv: {},
            // Not `managedBy: svc`: the service of this test would remove them as unknown.
            labels: { managedBy: 'svc-forward-test', kind: 'plain_vm', plainVmId: id },
            login: { user: 'debian', authorizedKeys: [key.publicLine] },
            firewall: DEFAULT_FIREWALL_RULES,
          }),
        ),
      );
      const ports = servers.map((server) => server.ssh?.port);
      expect(servers.map((server) => server.ssh?.host)).toEqual([
        outside.hostAddress,
        outside.hostAddress,
      ]);
      expect(new Set(ports).size).toBe(2);
      const now = await entries();
      for (const [i, id] of ids.entries()) {
        expect(now.filter((entry) => entry.description.includes(id))).toEqual([
          expect.objectContaining({ listen_port: String(ports[i]), target_port: '22' }),
        ]);
      }
    } finally {
      await Promise.all(ids.map((id, i) => (drivers[i] as IncusComputeDriver).deleteServer(id)));
      await Promise.all(drivers.map((driver) => driver.close()));
    }
    expect((await entries()).filter((e) => ids.some((id) => e.description.includes(id)))).toEqual(
      [],
    );
  });
});
