import type { FirewallRule, MachineLimits, Region, Size } from '@svc/contract';

/** What a server looks like to the service, whatever the provider. */
export interface ServerInfo {
  readonly id: string;
  readonly status: 'running' | 'off';
  readonly labels: Readonly<Record<string, string>>;
  readonly ipv4?: string;
  readonly ipv6?: string;
  /** Where its SSH server answers (Plain VMs). */
  readonly ssh?: { readonly host: string; readonly port: number };
  /**
   * Agents: where the service (its edge proxy) reaches the machine's gateway (`svc gateway`);
   * `tls` on cloud drivers (the service's CA, the machine's name: `@svc/contract/gateway-tls`).
   */
  readonly gateway?: { readonly host: string; readonly port: number; readonly tls?: boolean };
}

/** Who may log in to a Plain VM: its default user with these keys or this password. */
export interface ServerLogin {
  readonly user: string;
  /** `type base64` lines. */
  readonly authorizedKeys: readonly string[];
  /** crypt(3) SHA-512 hash of the one-time password, when password login is enabled. */
  readonly passwordHash?: string;
  /** The VM's name, which `userData` makes its hostname: the local driver shows it in the prompt. */
  readonly hostname?: string;
}

export interface CreateServerSpec {
  /** Our own id for the machine: every call is keyed by it, so retries never make a second one. */
  readonly id: string;
  readonly size: Size;
  readonly region: Region;
  /** OS image, or `undefined` for the Agent image. */
  readonly image?: string;
  /** Copy this server's disk instead of starting from the image (clones). */
  readonly sourceServerId?: string;
  /**
   * Agents adopted from a bundle: a directory on this host whose tree the home starts with,
   * before the first boot. It holds only regular files and directories (checked before).
   */
  readonly homeSeed?: string;
  /** Environment the machine's software gets (e.g. the Agent's service URL and token). */
  readonly bootstrapEnv: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** Plain VMs: cloud-init user data, run by the image at first boot (cloud drivers). */
  readonly userData?: string;
  /** Plain VMs: the login `userData` sets up, for drivers that cannot run cloud-init. */
  readonly login?: ServerLogin;
  /** Plain VMs: the firewall attached from the start. */
  readonly firewall?: readonly FirewallRule[];
}

/** A resize: the size the server has, the one it gets, in its region. */
export interface ResizeChange {
  readonly from: Size;
  readonly to: Size;
  readonly region: Region;
}

/** A snapshot of a server's disk as the driver holds it. */
export interface SnapshotTaken {
  /** What the driver calls it (an Incus snapshot's name, a Hetzner image's id). */
  readonly ref: string;
  /** The space it holds (what its storage is billed by). */
  readonly sizeBytes: number;
}

/**
 * Snapshots of servers' disks. `snapshotId` is the service's own id of the snapshot: the driver
 * names it after that id, so a retried `create` finds the copy an earlier try made.
 */
export interface SnapshotDriver {
  /** Whether a running server can be snapshotted (else the service asks for it stopped). */
  readonly whileRunning: boolean;
  create(serverId: string, snapshotId: string): Promise<SnapshotTaken>;
  /** Puts the stopped server's disk back as the snapshot has it; the server stays off. */
  restore(serverId: string, ref: string): Promise<void>;
  /** Removes one; a missing one is no error. */
  remove(serverId: string, ref: string): Promise<void>;
}

/** One cell of a driver's warm pool (`INCUS_WARM_POOL`): machines kept booted for creates. */
export interface PoolCellStatus {
  /** `plain_vm:<image>:<size>:<region>` or `agent:<size>:<region>`. */
  readonly cell: string;
  /** Members wanted. */
  readonly want: number;
  /** Booted, checked and unclaimed. */
  readonly ready: number;
  /** Made and not yet checked. */
  readonly starting: number;
}

/**
 * An infrastructure provider, as the service uses it. Every method is idempotent: creating an
 * existing id returns it, powering on a running server or deleting a missing one succeeds.
 */
export interface ComputeDriver {
  /** The provider identifier stored on each Agent (`local`, `hetzner`, …). */
  readonly name: string;
  createServer(spec: CreateServerSpec): Promise<ServerInfo>;
  powerOn(id: string): Promise<void>;
  powerOff(id: string): Promise<void>;
  reboot(id: string): Promise<void>;
  deleteServer(id: string): Promise<void>;
  getServer(id: string): Promise<ServerInfo | undefined>;
  /** Replaces the environment the machine's software reads (e.g. after a token is regenerated). */
  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void>;
  listServers(labels: Readonly<Record<string, string>>): Promise<ServerInfo[]>;
  /** Replaces the server's firewall rules; answers with the rules as the provider now has them. */
  setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]>;
  /** The server's firewall rules as the provider has them; `undefined` if it has no server. */
  getFirewall(id: string): Promise<FirewallRule[] | undefined>;
  /**
   * The service's URL as its machines reach it, where that differs from the public one (a
   * loopback public URL on one host, which inside a machine is the machine itself). Optional.
   */
  machineServiceUrl?(publicUrl: string): string;
  /**
   * The vCPUs, RAM and disk it gives a machine of this size and region, where they are its own
   * rather than the size table's (the incus driver scales the table). Optional: a driver without
   * it gives the table's numbers or sets no limits, and the machine's detail shows the table's.
   */
  machineLimits?(size: Size, region: Region): MachineLimits | undefined;
  /**
   * Which of these OS image keys Plain VMs can boot now (the images it has). Optional: a driver
   * without it boots every key.
   */
  bootableImages?(keys: readonly string[]): Promise<ReadonlySet<string>>;
  /**
   * Makes what the driver keeps beside its servers follow them (the incus driver: Plain VMs'
   * SSH forwards, made again when lost, removed when their VM is gone; the hetzner driver:
   * Agents' gateway certificates renewed before they end). The Plain VM reconciler calls it
   * each pass (optional).
   */
  reconcile?(): Promise<void>;
  /** Starts the driver's own background work, in processes that run jobs (optional). */
  start?(): void;
  /** Its warm pool of machines booted ahead of creates, cell by cell (optional: a pool's drivers). */
  poolStatus?(): Promise<PoolCellStatus[]>;
  /**
   * Gives a stopped server the limits of another size (the service has refused a smaller disk):
   * CPU and memory may go down, the disk only grows. Optional: a driver without it (local) only
   * records the new size, on the machine's row.
   */
  resize?(id: string, change: ResizeChange): Promise<void>;
  /**
   * Snapshots of its servers' disks (optional: a driver without them answers 409). A server's
   * deletion need not remove them: the service removes each before it deletes the server.
   */
  readonly snapshots?: SnapshotDriver;
  /** Releases what the driver holds in this process (not the servers). */
  close(): Promise<void>;
}

/**
 * The limits `driver` gave a machine of its own (a machine another driver made, e.g. a legacy
 * Agent, is not its to describe); `undefined` where it gives the size table's numbers.
 */
export const machineLimitsOf = (
  driver: ComputeDriver,
  machine: { readonly provider: string; readonly size: Size; readonly region: Region },
): MachineLimits | undefined =>
  machine.provider === driver.name
    ? driver.machineLimits?.(machine.size, machine.region)
    : undefined;

/**
 * A failure provisioning can name and that trying again cannot fix (the image is not there, the
 * provider's account is at its limit, the size is sold out where it was asked for, the adopted
 * bundle's tarball is damaged or its version deleted): the machine goes to `error` at once with
 * `reason` as its `statusReason`.
 */
export class ComputeFailure extends Error {
  override name = 'ComputeFailure';
  constructor(
    readonly reason:
      | 'image_unavailable'
      | 'resource_limit_exceeded'
      | 'resource_unavailable'
      | 'placement_error'
      | 'bundle_invalid'
      | 'bundle_version_deleted',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A driver that cannot start for a reason its operator fixes (the daemon is unreachable or does
 * not trust us, a project, network or storage pool is missing or set up otherwise): the message
 * is one line naming what to do, and the process entry prints it alone, without a stack.
 */
export class ComputeUnavailable extends Error {
  override name = 'ComputeUnavailable';
}
