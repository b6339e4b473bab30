import { type DiskOperation, isTransient, type MachineState } from '@svc/contract';

/**
 * While a machine is in a transient state the page asks often, so `running` shows within a
 * quarter second of being true; a transient state lasts seconds, and the service logs these GETs
 * at debug. At rest nothing polls.
 */
export const POLL_MS = 250;

/**
 * While a snapshot is taken or restored the page asks once a second: on a cloud server that
 * takes minutes, so a quarter second's pace would be hundreds of requests for nothing.
 */
export const DISK_POLL_MS = 1000;

/** What polling looks at: the state, and a snapshot or restore under way (`diskOperation`). */
export interface MachineActivity {
  status: MachineState;
  diskOperation?: DiskOperation;
}

/**
 * A `refetchInterval` that polls while any machine in the data is in a transient state, or (more
 * slowly) has a snapshot or restore under way.
 */
export function pollWhileTransient<T extends MachineActivity>(
  data: T | readonly T[] | undefined,
): number | false {
  if (data === undefined) return false;
  const list = Array.isArray(data) ? data : [data as T];
  if (list.some((item) => isTransient(item.status))) return POLL_MS;
  return list.some((item) => item.diskOperation) ? DISK_POLL_MS : false;
}
