import type { ServerInfo } from '../compute-driver.js';
import { instanceName, labelsOf, MACHINE_ID_KEY } from './incus-instance-spec.js';

// An Incus instance as the driver reads it, and what the service sees of it.

/** The instance's one network interface, on the bridge. */
export const NIC = 'eth0';

export interface Instance {
  readonly name: string;
  readonly status: string;
  readonly config: Record<string, string>;
  readonly devices: Record<string, Record<string, string>>;
  readonly state?: {
    readonly network?: Record<
      string,
      { readonly addresses: { family: string; address: string; scope: string }[] }
    >;
  } | null;
}

/** What `PUT /1.0/instances/<name>` takes besides `config` and `devices`. */
export interface WritableInstance {
  readonly architecture: string;
  readonly ephemeral: boolean;
  readonly profiles: string[];
  readonly stateful: boolean;
  readonly description: string;
}

/** An instance being created or deleted meanwhile comes without config or devices. */
export const complete = (instance: Instance): Instance => ({
  ...instance,
  config: instance.config ?? {},
  devices: instance.devices ?? {},
});

export function requireName(id: string): string {
  const name = instanceName(id);
  if (!name) throw new Error(`not a machine id: ${JSON.stringify(id)}`);
  return name;
}

export function pinnedAddress(instance: Instance): string {
  const address = instance.devices[NIC]?.['ipv4.address'];
  if (!address) throw new Error(`instance ${instance.name} has no pinned IPv4 address`);
  return address;
}

/** What the service sees: the address from the running instance, else the pinned one. */
export function info(instance: Instance): ServerInfo {
  const live = instance.state?.network?.[NIC]?.addresses.find(
    (address) => address.family === 'inet' && address.scope === 'global',
  )?.address;
  const ipv4 = live ?? instance.devices[NIC]?.['ipv4.address'];
  return {
    id: instance.config[MACHINE_ID_KEY] as string,
    status: instance.status === 'Running' ? 'running' : 'off',
    labels: labelsOf(instance.config),
    ...(ipv4 && { ipv4, ssh: { host: ipv4, port: 22 } }),
  };
}
