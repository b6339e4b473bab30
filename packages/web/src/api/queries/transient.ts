import { isTransient, type MachineState } from '@svc/contract';

/**
 * While a machine is in a transient state the page asks often, so `running` shows within a
 * quarter second of being true; a transient state lasts seconds, and the service logs these GETs
 * at debug. At rest nothing polls.
 */
export const POLL_MS = 250;

/** A `refetchInterval` that polls while any machine in the data is in a transient state. */
export function pollWhileTransient<T extends { status: MachineState }>(
  data: T | readonly T[] | undefined,
): number | false {
  if (data === undefined) return false;
  const list = Array.isArray(data) ? data : [data as T];
  return list.some((item) => isTransient(item.status)) ? POLL_MS : false;
}
