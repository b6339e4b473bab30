import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import {
  cp,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { ensureCliBuild } from '@svc/cli/ensure-build';
import type { FirewallRule } from '@svc/contract';
import type { Logger } from '../../logger.js';
import { KeyedQueue } from '../../util/keyed-queue.js';
import { AGENT_ENV_PATH, agentEnvFile } from './agent-env-file.js';
import type {
  ComputeDriver,
  CreateServerSpec,
  ServerInfo,
  SnapshotDriver,
} from './compute-driver.js';
import { preparePlainVm, readFirewall, sshProgramArgs, writeFirewall } from './local-plain-vm.js';
import {
  LOOPBACK,
  MACHINE_PORTS,
  type PortRange,
  PortReservations,
  portFrees,
  waitForOwnListener,
} from './local-ports.js';
import { LocalSnapshots } from './local-snapshots.js';

interface MachineRecord {
  id: string;
  status: 'running' | 'off';
  labels: Record<string, string>;
  env: Record<string, string>;
  pid?: number;
  /** Plain VMs: the loopback port of their SSH server. */
  sshPort?: number;
  /** Agents: the loopback port of their gateway (`svc gateway`). */
  gatewayPort?: number;
}

const SUPERVISE_INTERVAL_MS = 2_000;
/** How long a machine found dead while running must stay so before it is restarted. */
const SETTLE_MS = 1_000;
const MACHINE_PATH = '/usr/local/bin:/usr/bin:/bin';
/**
 * An Agent's `bin/` (beside its home): `svc` and `node`, as every Agent has them on its PATH
 * (`/usr/local/bin` on Incus and Hetzner). `svc` runs the repository's build of it.
 */
const MACHINE_BIN = 'bin';

/**
 * VMs on this host: each is `root/<id>/` with a persistent `home/`, and "running" is a real
 * process started in that home: an idle placeholder for an Agent, an SSH server on its own
 * loopback port for a Plain VM (see `local-plain-vm.ts`). The process table lives in `machine.json` files, so a restarted
 * service finds its machines again; a supervisor restarts a running machine's process if it dies.
 */
export class LocalComputeDriver implements ComputeDriver {
  readonly name = 'local';
  #timer: NodeJS.Timeout | undefined;
  /**
   * One change per machine at a time: the supervisor and a job may both power a machine on, and
   * two processes on its one port would leave the record naming the one that lost.
   */
  readonly #serial = new KeyedQueue();
  readonly #ports: PortReservations;
  readonly #portRange: PortRange;
  /** Copies of machines' homes in `snapshots/` beside `root` (`local-snapshots.ts`). */
  readonly snapshots: SnapshotDriver;

  /**
   * `options.reservations`: where ports are reserved (the host's one directory unless a test
   * keeps its own); `options.ports`: the range they are drawn from.
   */
  constructor(
    readonly root: string,
    readonly log: Logger,
    options: { reservations?: PortReservations; ports?: PortRange } = {},
  ) {
    this.#ports = options.reservations ?? new PortReservations();
    this.#portRange = options.ports ?? MACHINE_PORTS;
    this.snapshots = new LocalSnapshots({
      root: path.join(path.dirname(root), 'snapshots'),
      homeOf: (id) => this.homeOf(id),
      exclusive: (id, work) => this.#serial.run(id, work),
      // The restored home's agent.env is the one it had then: an Agent's current token goes back.
      restored: async (id) => {
        const record = await this.#read(id);
        if (record && Object.keys(record.env).length > 0) {
          await writeAgentEnv(this.homeOf(id), record.env);
        }
      },
    });
  }

  /** Starts supervising (call once the service runs jobs). */
  start(): void {
    this.#timer ??= setInterval(() => void this.supervise(), SUPERVISE_INTERVAL_MS);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  homeOf(id: string): string {
    return path.join(this.root, id, 'home');
  }

  createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    return this.#serial.run(spec.id, () => this.#createServer(spec));
  }

  async #createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    const existing = await this.#read(spec.id);
    if (existing) {
      // A retry after a failed boot: make sure it runs this time.
      await this.#powerOn(spec.id);
      return info((await this.#read(spec.id)) as MachineRecord);
    }
    const dir = path.join(this.root, spec.id);
    const home = this.homeOf(spec.id);
    if (spec.sourceServerId) {
      await cp(this.homeOf(spec.sourceServerId), home, { recursive: true, verbatimSymlinks: true });
    } else if (spec.homeSeed) {
      // A retry after a failed first try starts again from the seed alone.
      await rm(home, { recursive: true, force: true });
      await cp(spec.homeSeed, home, { recursive: true, errorOnExist: true, force: false });
    } else {
      await mkdir(home, { recursive: true });
    }
    if (Object.keys(spec.bootstrapEnv).length > 0) await writeAgentEnv(home, spec.bootstrapEnv);
    const record: MachineRecord = {
      id: spec.id,
      status: 'off',
      labels: { ...spec.labels },
      env: { ...spec.bootstrapEnv },
    };
    // Reserved for the machine's whole life; a machine without a record (below) does not hold it
    // once this process is gone.
    const port = await this.#ports.reserve(dir, this.#portRange);
    try {
      if (spec.login) {
        await preparePlainVm(dir, spec.login, spec.firewall ?? []);
        record.sshPort = port;
      } else {
        record.gatewayPort = port;
      }
      // The record is written last: a machine without one was never finished and is recreated.
      await mkdir(dir, { recursive: true });
      await this.#write(record);
    } catch (error) {
      // Its retry draws a port anew.
      await this.#ports.release(port, dir);
      throw error;
    }
    await this.#powerOn(spec.id);
    return info({ ...record, status: 'running' });
  }

  powerOn(id: string): Promise<void> {
    return this.#serial.run(id, () => this.#powerOn(id));
  }

  async #powerOn(id: string): Promise<void> {
    const record = await this.#require(id);
    if (record.status === 'running' && isOurs(record.pid, id)) return;
    const port = record.sshPort ?? record.gatewayPort;
    // Reserved again where the reservation is gone (the host's temporary files were cleared).
    if (port && !(await this.#ports.claim(port, path.join(this.root, id)))) {
      throw new Error(`port ${port} of ${id} is reserved by another machine`);
    }
    // Its port taken by something else while it was off: answering there would be an impostor.
    // (A process just killed may hold its socket a moment after it is gone from /proc.)
    if (port && !(await portFrees(port, 3_000))) throw new Error(`port ${port} of ${id} is taken`);
    // Agents run the built `svc` (built first when missing or stale), as Incus Agents do.
    const svc = record.gatewayPort ? await this.#installSvc(record.id) : undefined;
    record.pid = this.#spawn(record, svc);
    record.status = 'running';
    await this.#write(record);
    // Running means reachable: up once its own SSH server or gateway listens. Whatever else
    // answers there (a process that bound the port since it was checked) is not the machine.
    const pid = record.pid;
    try {
      if (port) {
        await waitForOwnListener(port, pid, () => isOurs(pid, id)).catch((error: Error) => {
          throw new Error(`machine ${id} did not start: ${error.message}`);
        });
      }
      if (!isOurs(pid, id)) throw new Error(`machine ${id} exited while starting`);
    } catch (error) {
      // Not started: its process (alive but not listening, or gone) is stopped and the record
      // says off, so a retry starts it anew with the listener check instead of trusting `running`.
      await stopProcess(pid, id);
      delete record.pid;
      record.status = 'off';
      await this.#write(record);
      throw error;
    }
  }

  powerOff(id: string): Promise<void> {
    return this.#serial.run(id, () => this.#powerOff(id));
  }

  async #powerOff(id: string): Promise<void> {
    const record = await this.#require(id);
    await stopProcess(record.pid, id);
    delete record.pid;
    record.status = 'off';
    await this.#write(record);
  }

  reboot(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      await this.#powerOff(id);
      await this.#powerOn(id);
    });
  }

  deleteServer(id: string): Promise<void> {
    return this.#serial.run(id, () => this.#deleteServer(id));
  }

  async #deleteServer(id: string): Promise<void> {
    const record = await this.#read(id);
    if (record) await stopProcess(record.pid, id);
    await rm(path.join(this.root, id), { recursive: true, force: true });
    const port = record?.sshPort ?? record?.gatewayPort;
    if (port) await this.#ports.release(port, path.join(this.root, id));
  }

  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void> {
    return this.#serial.run(id, () => this.#setBootstrapEnv(id, env));
  }

  async #setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void> {
    const record = await this.#require(id);
    record.env = { ...env };
    await writeAgentEnv(this.homeOf(id), env);
    await this.#write(record);
  }

  async setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    await this.#require(id);
    const dir = path.join(this.root, id);
    await writeFirewall(dir, rules);
    return (await readFirewall(dir)) ?? [];
  }

  async getFirewall(id: string): Promise<FirewallRule[] | undefined> {
    return (await this.#read(id)) && readFirewall(path.join(this.root, id));
  }

  async getServer(id: string): Promise<ServerInfo | undefined> {
    const record = await this.#read(id);
    return record && info(record);
  }

  async listServers(labels: Readonly<Record<string, string>>): Promise<ServerInfo[]> {
    const ids = await readdir(this.root).catch(() => [] as string[]);
    const records = await Promise.all(ids.map((id) => this.#read(id)));
    return records
      .filter((r): r is MachineRecord => r !== undefined)
      .filter((r) => Object.entries(labels).every(([k, v]) => r.labels[k] === v))
      .map(info);
  }

  /** Restarts the process of every running machine whose process is gone. */
  async supervise(): Promise<void> {
    for (const server of await this.listServers({})) {
      if (!(await this.#deadWhileRunning(server.id))) continue;
      // Still so a moment later: not a stop or a start another process is in the middle of.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const record = await this.#read(server.id);
      if (record && (await this.#deadWhileRunning(server.id))) {
        // What the process said last tells why it died (its console, as a VM's serial log).
        const console = await consoleTail(path.join(this.root, record.id, 'console.log'));
        this.log.warn({ machineId: record.id, console }, 'machine process gone; restarting it');
        await this.powerOn(record.id).catch(async (err) => {
          // Destroyed meanwhile (by another process): nothing is left to restart.
          if (!(await this.#read(record.id))) return;
          this.log.error({ err, machineId: record.id }, 'restart failed');
        });
      }
    }
  }

  /** Whether the machine's record says running while its process is gone. */
  async #deadWhileRunning(id: string): Promise<boolean> {
    const record = await this.#read(id);
    return record?.status === 'running' && !isOurs(record.pid, record.id);
  }

  /** Whether a running machine's process is alive (for tests and status checks). */
  async isProcessAlive(id: string): Promise<boolean> {
    const record = await this.#read(id);
    return isOurs(record?.pid, id);
  }

  /**
   * Puts `svc` (a shim running the build) and `node` in the Agent's `bin/`; answers the build's
   * entry. Rewritten at each start, so a machine follows the repository's build and Node.
   */
  async #installSvc(id: string): Promise<string> {
    const entry = await ensureCliBuild({
      onBuild: () => this.log.info({ machineId: id }, 'building svc for the local machines'),
    });
    const bin = path.join(this.root, id, MACHINE_BIN);
    await mkdir(bin, { recursive: true });
    const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
    await writeFile(
      path.join(bin, 'svc'),
      `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(entry)} "$@"\n`,
      { mode: 0o755 },
    );
    await rm(path.join(bin, 'node'), { force: true });
    await symlink(process.execPath, path.join(bin, 'node'));
    return entry;
  }

  #spawn(record: MachineRecord, svc: string | undefined): number {
    const home = this.homeOf(record.id);
    const dir = path.join(this.root, record.id);
    const console = openSync(path.join(dir, 'console.log'), 'a');
    const marker = `--svc-machine=${record.id}`;
    const bin = path.join(dir, MACHINE_BIN);
    const args = svc ? [svc, 'gateway', marker] : sshProgramArgs(dir, marker, record.sshPort ?? 0);
    // Detached: machines outlive a restart of the service, as VMs would.
    const child = spawn(process.execPath, args, {
      cwd: home,
      env: {
        PATH: svc ? `${bin}:${MACHINE_PATH}` : MACHINE_PATH,
        HOME: home,
        ...record.env,
        ...(svc && {
          SVC_GATEWAY_PORT: String(record.gatewayPort),
          SVC_GATEWAY_HOST: LOOPBACK,
          // The host's processes are its machines' too: its SSH sessions are nobody's use of them.
          SVC_GATEWAY_SSH_ACTIVITY: 'off',
          // A login shell's profile sets PATH anew; the terminal puts `bin/` back in front.
          SVC_TERMINAL_PATH: bin,
        }),
      },
      detached: true,
      stdio: ['ignore', console, console],
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start machine ${record.id}`);
    return child.pid;
  }

  async #read(id: string): Promise<MachineRecord | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    try {
      return JSON.parse(
        await readFile(path.join(this.root, id, 'machine.json'), 'utf8'),
      ) as MachineRecord;
    } catch {
      return undefined;
    }
  }

  async #require(id: string): Promise<MachineRecord> {
    const record = await this.#read(id);
    if (!record) throw new Error(`no machine ${id}`);
    return record;
  }

  /**
   * Written whole under a name of its own, then renamed over the record: another process of the
   * service (replicas share DATA_DIR) reads the old record or the new one, never half of one.
   */
  async #write(record: MachineRecord): Promise<void> {
    const file = path.join(this.root, record.id, 'machine.json');
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
    await rename(temporary, file);
  }
}

const info = (record: MachineRecord): ServerInfo => ({
  id: record.id,
  status: record.status,
  labels: record.labels,
  ...(record.sshPort && { ipv4: LOOPBACK, ssh: { host: LOOPBACK, port: record.sshPort } }),
  ...(record.gatewayPort && { gateway: { host: LOOPBACK, port: record.gatewayPort } }),
});

/** `home/.crabglamp/agent.env`, mode 600: how `svc` on the machine finds the service. */
async function writeAgentEnv(home: string, env: Readonly<Record<string, string>>) {
  const file = path.join(home, AGENT_ENV_PATH);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, agentEnvFile(env), { mode: 0o600 });
}

/** The last kilobyte of a machine's console log ('' when it has none). */
async function consoleTail(file: string): Promise<string> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, 1024);
    const { buffer } = await handle.read(Buffer.alloc(length), 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** True when `pid` is alive and is this machine's process (not a reused pid). */
function isOurs(pid: number | undefined, id: string): boolean {
  if (!pid) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`--svc-machine=${id}`);
  } catch {
    return false;
  }
}

/** Stops the machine's whole process group (it was started detached, as its leader). */
async function stopProcess(pid: number | undefined, id: string): Promise<void> {
  if (!pid || !isOurs(pid, id)) return;
  signalGroup(pid, 'SIGTERM');
  for (let waited = 0; waited < 5_000 && isOurs(pid, id); waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signalGroup(pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}
