import { randomUUID } from 'node:crypto';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp } from '../../../../test/clean-up.js';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../../../test/incus.js';
import { LogCapture } from '../../../../test/log-capture.js';
import { createOutsideClient, type OutsideClient } from '../../../../test/outside-client.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';
import type { Forward } from './incus-network-forward.js';

// A public SSH port freed by a destroyed Plain VM is held back (INCUS_SSH_PORT_HOLD_HOURS) before
// another VM gets it while the range has room, recorded on the network forward, on the real
// daemon; with no other port left the one held longest is handed on, and only a range whose
// every port is in use by a VM refuses one. Two ports only, so the range runs out at once.

const PORTS = { first: 22300, last: 22301 };
const HOLD_MS = 24 * 3_600_000;
const FREED = 'user.svc.ssh-freed.';

describe('public SSH ports freed by destroyed Plain VMs', { timeout: 300_000 }, () => {
  let outside: OutsideClient;
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let incus: IncusClient;
  let driver: IncusComputeDriver;
  const logs = new LogCapture();

  beforeAll(async () => {
    outside = await createOutsideClient();
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    driver = new IncusComputeDriver(
      incusDriverOptions(project.name, {
        publicSsh: { addresses: { '*': outside.hostAddress }, ports: PORTS, holdMs: HOLD_MS },
      }),
      pino({ level: 'info' }, logs),
    );
    await driver.connect();
  });

  afterAll(() =>
    cleanUp({
      driver: () => driver?.close(),
      project: () => project?.remove(),
      incus: () => incus?.close(),
      outside: () => outside?.remove(),
    }),
  );

  const forwardPath = () => `/1.0/networks/incusbr0/forwards/${outside.hostAddress}`;
  const forward = () => incus.request<Forward>('GET', forwardPath());
  /** Sets when `ports` (every held one by default) were freed, as if long ago. */
  const setHolds = async (freedAt: string, ports?: readonly number[]) => {
    const { metadata, etag } = await forward();
    const config = Object.fromEntries(
      Object.entries(metadata.config).map(([key, value]) => {
        const isHold =
          key.startsWith(FREED) && (!ports || ports.includes(Number(key.slice(FREED.length))));
        return [key, isHold ? freedAt : value];
      }),
    );
    await incus.call('PUT', forwardPath(), {
      body: { description: metadata.description, config, ports: metadata.ports },
      ...(etag && { headers: { 'If-Match': etag } }),
    });
  };
  const plainVm = (id = randomUUID()) =>
    driver.createServer({
      id,
      size: 'small',
      region: 'eu',
      image: 'debian-12',
      bootstrapEnv: {},
      // Not `managedBy: svc`: no service runs here, but the label is a service's own.
      labels: { managedBy: 'svc-port-hold-test', kind: 'plain_vm', plainVmId: id },
      login: { user: 'debian', authorizedKeys: [] },
      firewall: DEFAULT_FIREWALL_RULES,
    });

  it('hands a held port on only when no other is left, the one held longest first', async () => {
    const first = await plainVm();
    expect(first.ssh).toEqual({ host: outside.hostAddress, port: PORTS.first });
    await driver.deleteServer(first.id);
    // The forward outlives its last entry, holding the port.
    const held = (await forward()).metadata;
    expect(held.ports).toEqual([]);
    expect(Date.parse(held.config[`${FREED}${PORTS.first}`] as string)).toBeGreaterThan(
      Date.now() - 60_000,
    );

    // A free port goes before a held one, even a lower one.
    const second = await plainVm();
    expect(second.ssh?.port).toBe(PORTS.last);
    await driver.deleteServer(second.id);

    // Both held, the higher freed earlier: with nothing else left, it is handed on first.
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    await setHolds(hoursAgo(2), [PORTS.last]);
    await setHolds(hoursAgo(1), [PORTS.first]);
    const third = await plainVm();
    expect(third.ssh?.port).toBe(PORTS.last);
    expect(
      Object.keys((await forward()).metadata.config).filter((k) => k.startsWith(FREED)),
    ).toEqual([`${FREED}${PORTS.first}`]);
    const handedOn = logs.entries().find((line) => line.port === PORTS.last && 'heldHours' in line);
    expect(handedOn).toMatchObject({ level: 30, heldHours: 2 });
    const fourth = await plainVm();
    expect(fourth.ssh?.port).toBe(PORTS.first);
    expect(
      Object.keys((await forward()).metadata.config).filter((k) => k.startsWith(FREED)),
    ).toEqual([]);

    // Every port in use by a VM: the next one gets none.
    const refused = randomUUID();
    await expect(plainVm(refused)).rejects.toThrow(/no free SSH port left .*every port is in use/);
    // Its instance, made before the port was looked for, goes as a failed provisioning's does.
    await driver.deleteServer(refused);

    // Destroying both holds both; the forward stays for them.
    await driver.deleteServer(third.id);
    await driver.deleteServer(fourth.id);
    expect(Object.keys((await forward()).metadata.config).sort()).toEqual([
      `${FREED}${PORTS.first}`,
      `${FREED}${PORTS.last}`,
    ]);

    // Once their holds are over (their records set back by more than the hold), the reconciler
    // drops them, and the forward with them.
    await setHolds(hoursAgo(HOLD_MS / 3_600_000 + 1));
    await driver.reconcile();
    await expect(forward()).rejects.toThrow(/not found/i);
  });
});
