import { spawnSync } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/wait.js';
import { createLogger } from '../../logger.js';
import type { CreateServerSpec } from './compute-driver.js';
import { LocalComputeDriver } from './local-compute-driver.js';
import { listensOn, MACHINE_PORTS, PortReservations } from './local-ports.js';

const log = createLogger({ logLevel: 'silent' });

const plainVm = (): CreateServerSpec => ({
  id: randomUUID(),
  size: 'small',
  region: 'eu',
  bootstrapEnv: {},
  labels: {},
  login: { user: 'ubuntu', authorizedKeys: [] },
  firewall: [],
});

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end('SSH-2.0-impostor\r\n');
    });
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

const canBind = (port: number) =>
  listen(port).then(
    (server) => new Promise<boolean>((resolve) => server.close(() => resolve(true))),
    () => false,
  );

/**
 * Two neighbouring ports of the machines' range that nothing listens on now, reserved for
 * `holder` in the host's own reservations: the machines of other tests running meanwhile (which
 * reserve there) never take them, so only this test's services compete for them. Not the
 * kernel's pick: that is in its ephemeral range, where any outgoing connection may take it.
 */
async function unusedPorts(host: PortReservations, holder: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = MACHINE_PORTS.from + randomInt(MACHINE_PORTS.to - MACHINE_PORTS.from);
    if (!(await host.claim(port, holder))) continue;
    if (
      (await host.claim(port + 1, holder)) &&
      (await canBind(port)) &&
      (await canBind(port + 1))
    ) {
      return port;
    }
    await host.release(port, holder);
    await host.release(port + 1, holder);
  }
  throw new Error('no two free ports in the machines’ range');
}

const recordOf = async (driver: LocalComputeDriver, id: string) =>
  JSON.parse(await readFile(path.join(driver.root, id, 'machine.json'), 'utf8')) as {
    pid?: number;
    sshPort: number;
    status: string;
  };

/**
 * Two services on one host (different DATA_DIRs, as two test processes have) whose machines'
 * ports are drawn from a range of two ports: what the host-wide reservations must keep apart.
 */
describe('local machines’ ports', () => {
  let work: string;
  let ports: readonly [number, number];
  let reservations: PortReservations;
  const hostReservations = new PortReservations();
  const drivers: LocalComputeDriver[] = [];
  const driver = (name: string) => {
    const made = new LocalComputeDriver(path.join(work, name, 'machines'), log, {
      reservations,
      ports: { from: ports[0], to: ports[1] },
    });
    drivers.push(made);
    return made;
  };

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-local-ports-'));
    reservations = new PortReservations(path.join(work, 'reservations'));
    const first = await unusedPorts(hostReservations, path.join(work, 'held'));
    ports = [first, first + 1];
  });
  afterAll(async () => {
    for (const each of drivers) {
      for (const server of await each.listServers({})) await each.deleteServer(server.id);
    }
    for (const port of ports ?? []) await hostReservations.release(port, path.join(work, 'held'));
    await rm(work, { recursive: true, force: true });
  });

  it('are kept for a machine through power-off, against another service’s machines, until it is destroyed', async () => {
    const first = driver('first');
    const second = driver('second');
    const a = await first.createServer(plainVm());
    const port = a.ssh?.port as number;
    expect(ports).toContain(port);
    await first.powerOff(a.id);

    // While `a` is off its port is free to bind, but it is still `a`'s: `b` gets the other.
    await waitFor(() => canBind(port), 10_000, 'the port free to bind');
    const b = await second.createServer(plainVm());
    expect(b.ssh?.port).toBe(ports.find((each) => each !== port));
    await first.powerOn(a.id);
    expect(listensOn((await recordOf(first, a.id)).pid as number, port)).toBe(true);

    // Released when `a` is destroyed: the next machine may have it.
    await first.deleteServer(a.id);
    const c = await second.createServer(plainVm());
    expect(c.ssh?.port).toBe(port);
    await second.deleteServer(c.id);
    await second.deleteServer(b.id);
  }, 60_000);

  it('takes over a reservation whose process and machine are gone, never a live one', async () => {
    const third = driver('third');
    const firstFile = path.join(reservations.dir, String(ports[0]));
    const secondFile = path.join(reservations.dir, String(ports[1]));
    // A live process's reservation of a machine without a record yet (being made) is kept.
    const making = (file: string) =>
      writeFile(
        file,
        JSON.stringify({ machine: path.join(work, 'making', 'y'), pid: process.pid }),
      );
    // A process that reserved the port and died before writing its machine's record.
    const dead = spawnSync('true').pid as number;
    await writeFile(
      firstFile,
      JSON.stringify({ machine: path.join(work, 'gone', 'x'), pid: dead }),
    );
    await making(secondFile);
    const taken = await third.createServer(plainVm());
    expect(taken.ssh?.port).toBe(ports[0]);
    await third.deleteServer(taken.id);

    // With both held by machines being made, the range has no port left.
    await making(firstFile);
    await expect(third.createServer(plainVm())).rejects.toThrow(/no free loopback port/);
    await rm(firstFile);
    await rm(secondFile);
  }, 60_000);

  it('is not running when another process answers on its port: the supervisor checks the listener is its own', async () => {
    const fourth = driver('fourth');
    const vm = await fourth.createServer(plainVm());
    const port = vm.ssh?.port as number;
    await fourth.powerOff(vm.id);
    // Another process binds the port between the check that it is free and the machine's own
    // bind: as soon as the machine's process is started (its pid in the record).
    let impostor: Server | undefined;
    const starting = fourth.powerOn(vm.id);
    for (let i = 0; i < 10_000 && !impostor; i += 1) {
      const record = await recordOf(fourth, vm.id).catch(() => undefined);
      if (record?.pid) impostor = await listen(port);
      else await new Promise((resolve) => setTimeout(resolve, 1));
    }
    try {
      await expect(starting).rejects.toThrow(/did not start|exited while starting/);
      // Not started: off, its process stopped, so a retry starts it again rather than taking
      // the record's word.
      const failed = await recordOf(fourth, vm.id);
      expect(failed).toMatchObject({ status: 'off' });
      expect(failed.pid).toBeUndefined();
      expect((await fourth.listServers({})).find((s) => s.id === vm.id)?.status).toBe('off');
    } finally {
      await new Promise((resolve) => impostor?.close(resolve));
    }
    // Once the port is free again a retry brings the machine itself up.
    await fourth.powerOn(vm.id);
    const { pid } = await recordOf(fourth, vm.id);
    expect(listensOn(pid as number, port)).toBe(true);
    await fourth.deleteServer(vm.id);
  }, 60_000);

  it('come from the range in order when random draws miss, never from the kernel’s ephemeral ones', async () => {
    // Every port of a range of 10,000 reserved by machines being made, but its last.
    const range = { from: 21_000, to: 30_999 };
    let free = range.to;
    while (!(await canBind(free))) free -= 1;
    const own = new PortReservations(path.join(work, 'crowded'));
    await own.claim(range.from, path.join(work, 'crowded-0'));
    await Promise.all(
      Array.from({ length: free - range.from - 1 }, (_, i) =>
        writeFile(
          path.join(own.dir, String(range.from + 1 + i)),
          JSON.stringify({ machine: path.join(work, `crowded-${i + 1}`), pid: process.pid }),
        ),
      ),
    );
    expect(await own.reserve(path.join(work, 'last'), range)).toBe(free);
  }, 60_000);
});
