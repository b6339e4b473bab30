import type { Region, Size } from '@svc/contract';

/** What a server looks like to the service, whatever the provider. */
export interface ServerInfo {
  readonly id: string;
  readonly status: 'running' | 'off';
  readonly labels: Readonly<Record<string, string>>;
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
  /** Environment the machine's software gets (e.g. the Agent's service URL and token). */
  readonly bootstrapEnv: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
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
  /** Releases what the driver holds in this process (not the servers). */
  close(): Promise<void>;
}
