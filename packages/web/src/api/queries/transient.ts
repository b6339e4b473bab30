import { isTransient, type MachineState } from '@svc/contract';

export const POLL_MS = 1_000;

/** A `refetchInterval` that polls while any machine in the data is in a transient state. */
export function pollWhileTransient<T extends { status: MachineState }>(
  data: T | readonly T[] | undefined,
): number | false {
  if (data === undefined) return false;
  const list = Array.isArray(data) ? data : [data as T];
  return list.some((item) => isTransient(item.status)) ? POLL_MS : false;
}
