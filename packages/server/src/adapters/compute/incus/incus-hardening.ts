import { SIZE_ORDER, type Size } from '@svc/contract';
import { hardenedConfig, type Instance, NIC, NIC_FILTERING } from './incus-instance.js';
import { instanceLimits, MACHINE_ID_KEY, machineMac } from './incus-instance-spec.js';

/**
 * Settings Incus takes on a running container but applies at its next start (or, for the guest
 * API socket, mounts or unmounts at once, which can fail on a running one): left for the start.
 */
const AT_NEXT_START = new Set(['security.guestapi']);

/** The size a machine was made with, read back from its memory limit (the same in every region). */
function sizeOf(instance: Instance, sizeFactor: number): Size {
  const memory = instance.config['limits.memory'];
  return (
    SIZE_ORDER.find(
      (size) => `${instanceLimits(size, 'eu', sizeFactor).memoryMiB}MiB` === memory,
    ) ?? 'small'
  );
}

/**
 * What an instance made before the isolation settings (`instanceBody`) lacks, as the `PATCH`
 * that adds it, or `undefined` when it has them all. A stopped instance gets everything; a
 * running one what Incus applies without touching its NIC (changing a running container's MAC
 * unplugs and replugs its interface, which leaves it without its address): the filtering at
 * once, the rest at its next start, when the driver aligns it again.
 */
export function alignmentPatch(
  instance: Instance,
  sizeFactor: number,
): { config: Record<string, string>; devices: Record<string, Record<string, string>> } | undefined {
  const isRunning = instance.status === 'Running';
  const type = instance.type ?? 'container';
  const limits = instanceLimits(sizeOf(instance, sizeFactor), 'eu', sizeFactor);
  const wanted: Record<string, string> = {
    ...hardenedConfig(type),
    ...(type === 'container' &&
      !instance.config['limits.processes'] && { 'limits.processes': String(limits.processes) }),
  };
  const config = Object.fromEntries(
    Object.entries(wanted).filter(
      ([key, value]) => instance.config[key] !== value && !(isRunning && AT_NEXT_START.has(key)),
    ),
  );
  const nic = instance.devices[NIC];
  const devices: Record<string, Record<string, string>> = {};
  if (nic) {
    // Keep the MAC Incus gave it (unique on the bridge already), now fixed.
    const hwaddr =
      nic.hwaddr ??
      instance.config[`volatile.${NIC}.hwaddr`] ??
      machineMac(instance.config[MACHINE_ID_KEY] ?? instance.name);
    const aligned = { ...nic, ...NIC_FILTERING, ...(!isRunning && { hwaddr }) };
    if (Object.entries(aligned).some(([key, value]) => nic[key] !== value)) devices[NIC] = aligned;
  }
  if (Object.keys(config).length === 0 && Object.keys(devices).length === 0) return undefined;
  return { config, devices };
}
