import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/wait.js';
import { createLogger } from '../../logger.js';
import type { CreateServerSpec } from './compute-driver.js';
import { LocalComputeDriver } from './local-compute-driver.js';
import { listensOn, PortReservations } from './local-ports.js';

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

/** A loopback port nothing listens on now (the kernel's pick). */
const unusedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
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

const recordOf = async (driver: LocalComputeDriver, id: string) =>
  JSON.parse(await readFile(path.join(driver.root, id, 'machine.json'), 'utf8')) as {
    pid?: number;
    sshPort: number;
  };

/**
 * Two services on one host (different DATA_DIRs, as two test processes have) whose machines'
 * ports are drawn from a range of one port: what the host-wide reservations must keep apart.
 */
describe('local machines’ ports', () => {
  let work: string;
  let port: number;
  let reservations: PortReservations;
  const drivers: LocalComputeDriver[] = [];
  const driver = (name: string) => {
    const made = new LocalComputeDriver(path.join(work, name, 'machines'), log, {
      reservations,
      ports: { from: port, to: port },
    });
    drivers.push(made);
    return made;
  };

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-local-ports-'));
    reservations = new PortReservations(path.join(work, 'reservations'));
    port = await unusedPort();
  });
  afterAll(async () => {
    for (const each of drivers) {
      for (const server of await each.listServers({})) await each.deleteServer(server.id);
    }
    await rm(work, { recursive: true, force: true });
  });

  it('are kept for a machine through power-off, against another service’s machines, until it is destroyed', async () => {
    const first = driver('first');
    const second = driver('second');
    const a = await first.createServer(plainVm());
    expect(a.ssh?.port).toBe(port);
    await first.powerOff(a.id);

    // While `a` is off its port is free to bind, but it is still `a`'s.
    await waitFor(() => canBind(port), 10_000, 'the port free to bind');
    const b = await second.createServer(plainVm());
    expect(b.ssh?.port).not.toBe(port);
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
    const file = path.join(reservations.dir, String(port));
    // A process that reserved the port and died before writing its machine's record.
    const dead = spawnSync('true').pid as number;
    await writeFile(file, JSON.stringify({ machine: path.join(work, 'gone', 'x'), pid: dead }));
    const taken = await third.createServer(plainVm());
    expect(taken.ssh?.port).toBe(port);
    await third.deleteServer(taken.id);

    // A live process's reservation of a machine without a record yet (being made) is kept.
    await writeFile(
      file,
      JSON.stringify({ machine: path.join(work, 'making', 'y'), pid: process.pid }),
    );
    const other = await third.createServer(plainVm());
    expect(other.ssh?.port).not.toBe(port);
    await third.deleteServer(other.id);
    await rm(file);
  }, 60_000);

  it('is not running when another process answers on its port: the supervisor checks the listener is its own', async () => {
    const fourth = driver('fourth');
    const vm = await fourth.createServer(plainVm());
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
    } finally {
      await new Promise((resolve) => impostor?.close(resolve));
    }
    // Once the port is free again the supervisor's restart brings the machine itself up.
    await fourth.supervise();
    const { pid } = await recordOf(fourth, vm.id);
    expect(listensOn(pid as number, port)).toBe(true);
    await fourth.deleteServer(vm.id);
  }, 60_000);
});
