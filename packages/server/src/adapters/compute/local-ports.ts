import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { link, lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isProcessAlive } from '../../util/is-process-alive.js';

/**
 * Local machines' loopback ports. A machine keeps its port for its whole life, through every
 * stop and restart, and listens on it only while it runs; so a port is reserved, not merely
 * found free: a file per port in one directory of this host (`portReservationsDir`), made with
 * `wx`, names the machine's directory. Every service on the host (each test's, whatever its
 * DATA_DIR) reserves there, so no two machines hold one port; a reservation whose machine is
 * gone (no record naming the port) and whose reserving process is dead is taken over.
 */

export const LOOPBACK = '127.0.0.1';

/** Where machines' ports are drawn from: below Linux's ephemeral range (32768–60999). */
export const MACHINE_PORTS = { from: 20_000, to: 32_767 } as const;
export type PortRange = { readonly from: number; readonly to: number };

/** The host's one reservations directory (per Unix user: it must be this user's alone). */
const portReservationsDir = () =>
  path.join(tmpdir(), `svc-local-ports-${process.getuid?.() ?? 'user'}`);

interface Reservation {
  /** The machine's directory (`<machines root>/<id>`), whose `machine.json` names the port. */
  readonly machine: string;
  /** The process that reserved it: until it ends, a machine without a record is being made. */
  readonly pid: number;
}

export class PortReservations {
  constructor(readonly dir: string = portReservationsDir()) {}

  /**
   * A port reserved for the machine in `machineDir` that nothing listens on now: drawn from
   * `range`, else (all tried were taken) the first free one of `range` in order. Never one the
   * kernel picks: that is in its ephemeral range, where any outgoing connection may take it.
   */
  async reserve(machineDir: string, range: PortRange = MACHINE_PORTS): Promise<number> {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const port = range.from + randomInt(range.to - range.from + 1);
      if (await this.#claimFree(port, machineDir)) return port;
    }
    for (let port = range.from; port <= range.to; port += 1) {
      if (await this.#claimFree(port, machineDir)) return port;
    }
    throw new Error(`no free loopback port for a machine in ${range.from}-${range.to}`);
  }

  /**
   * Makes `port` the machine's (again): true when it is, false when another machine holds it.
   * A machine powered on after the host's temporary files were cleared reserves its port anew.
   */
  async claim(port: number, machineDir: string): Promise<boolean> {
    await this.#ensureDir();
    const file = path.join(this.dir, String(port));
    const mine: Reservation = { machine: path.resolve(machineDir), pid: process.pid };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const created = await writeExclusive(file, JSON.stringify(mine));
      if (created) return true;
      const held = await readReservation(file);
      if (held?.machine === mine.machine) return true;
      if (!held || !(await isStale(held, port))) return false;
      await takeAway(file, held);
    }
    return false;
  }

  /** Gives the machine's port back (at its destruction); another machine's reservation stays. */
  async release(port: number, machineDir: string): Promise<void> {
    const file = path.join(this.dir, String(port));
    const held = await readReservation(file);
    if (held?.machine === path.resolve(machineDir)) await unlink(file).catch(() => {});
  }

  async #claimFree(port: number, machineDir: string): Promise<boolean> {
    if (!(await this.claim(port, machineDir))) return false;
    if (await canListen(port)) return true;
    // Something that is no machine listens there: leave the port to it.
    await this.release(port, machineDir);
    return false;
  }

  /** The directory, made owner-only; one another user made (or could write) is refused. */
  async #ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stats = await lstat(this.dir);
    const uid = process.getuid?.();
    if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || stats.mode & 0o022) {
      throw new Error(
        `${this.dir} (local machines' port reservations) must be a directory of this user that no one else can write`,
      );
    }
  }
}

async function writeExclusive(file: string, text: string): Promise<boolean> {
  try {
    const handle = await open(file, 'wx', 0o600);
    await handle.writeFile(text);
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The reservation in `file`; `undefined` when there is none or it is being written. */
async function readReservation(file: string): Promise<Reservation | undefined> {
  try {
    const held = JSON.parse(await readFile(file, 'utf8')) as Reservation;
    return typeof held.machine === 'string' && Number.isInteger(held.pid) ? held : undefined;
  } catch {
    return undefined;
  }
}

/** Stale: its process is gone and the machine's record does not name this port (or is gone). */
async function isStale(held: Reservation, port: number): Promise<boolean> {
  if (isProcessAlive(held.pid)) return false;
  let text: string;
  try {
    text = await readFile(path.join(held.machine, 'machine.json'), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  try {
    const record = JSON.parse(text) as { sshPort?: number; gatewayPort?: number };
    return record.sshPort !== port && record.gatewayPort !== port;
  } catch {
    // A record being rewritten: the machine is alive.
    return false;
  }
}

/**
 * Removes a stale reservation, unless another process replaced it since it was read: it is moved
 * aside first (atomic), and put back if what was moved is not the stale one.
 */
async function takeAway(file: string, stale: Reservation): Promise<void> {
  const aside = `${file}.${process.pid}.${randomInt(1e9)}`;
  try {
    await rename(file, aside);
  } catch {
    return;
  }
  const moved = await readReservation(aside);
  // `link` puts it back only where no reservation was made meanwhile (it never overwrites).
  if (moved?.machine !== stale.machine || moved.pid !== stale.pid) {
    await link(aside, file).catch(() => {});
  }
  await unlink(aside).catch(() => {});
}

/** Whether `port` can be listened on at this moment (then closed again). */
const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, LOOPBACK, () => server.close(() => resolve(true)));
  });

/** Whether something accepts connections on this loopback port right now. */
const isListening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: LOOPBACK, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Whether the port is free now or within `timeoutMs`. */
export async function portFrees(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isListening(port)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * Resolves once process `pid` itself listens on the port (the machine has booted). Something
 * answering there is not enough: another process may have bound the port first, and the
 * machine's own server then fails. Read from the kernel's socket table (`/proc/net/tcp*`) and the
 * process's descriptors, so no impostor can answer for the machine. Rejects when `isRunning`
 * turns false or in `timeoutMs`.
 */
export async function waitForOwnListener(
  port: number,
  pid: number,
  isRunning: () => boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (listensOn(pid, port)) return;
    if (!isRunning()) throw new Error(`its process exited before listening on port ${port}`);
    if (Date.now() > deadline) {
      throw new Error(`its process does not listen on port ${port} (another process may)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether process `pid` holds a socket listening on this TCP port (any address). */
export function listensOn(pid: number, port: number): boolean {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return target.startsWith('socket:[') && inodes.has(target.slice(8, -1));
    } catch {
      return false;
    }
  });
}

/** Inodes of the sockets in state LISTEN (0A) on `port`, IPv4 and IPv6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (local?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}
