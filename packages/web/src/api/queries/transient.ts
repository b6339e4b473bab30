import type { AgentState } from '@svc/contract';

/** States a machine passes through on its own; lists and details poll while one is shown. */
export const TRANSIENT_STATES: ReadonlySet<AgentState> = new Set([
  'provisioning',
  'starting',
  'stopping',
  'restarting',
  'destroying',
]);

export const POLL_MS = 1_000;

/** A `refetchInterval` that polls while any machine in the data is in a transient state. */
export function pollWhileTransient<T extends { status: AgentState }>(
  data: T | readonly T[] | undefined,
): number | false {
  if (data === undefined) return false;
  const list = Array.isArray(data) ? data : [data as T];
  return list.some((item) => TRANSIENT_STATES.has(item.status)) ? POLL_MS : false;
}
