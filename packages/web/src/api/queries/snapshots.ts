import { agentSnapshots, plainVmSnapshots, type Snapshot } from '@svc/contract';
import type { Query, QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';
import { agentKey, agentsKey } from './agents.js';
import { plainVmKey, plainVmsKey } from './plain-vms.js';
import { DISK_POLL_MS } from './transient.js';

/**
 * Each machine kind's snapshot endpoints, and where its queries live: the snapshots under the
 * kind's key (so refreshing the kind asks for them again too), the machine's own detail.
 */
const OWNERS = {
  agent: { endpoints: agentSnapshots, key: agentsKey, detailKey: agentKey },
  plainVm: { endpoints: plainVmSnapshots, key: plainVmsKey, detailKey: plainVmKey },
} as const;

/** Whose snapshots: an Agent's or a Plain VM's. */
export type SnapshotOwner = keyof typeof OWNERS;

export const snapshotsKey = (owner: SnapshotOwner, id: string) =>
  [...OWNERS[owner].key, 'snapshots', id] as const;

/**
 * The machine's snapshots, newest first. Asked again while one is being taken or the machine has
 * a disk operation under way (`machineBusy`), so `ready` and the size show without a reload.
 */
export const snapshotsQuery = (owner: SnapshotOwner, id: string, machineBusy: boolean) => ({
  queryKey: snapshotsKey(owner, id),
  queryFn: async ({ signal }: { signal: AbortSignal }): Promise<Snapshot[]> =>
    (await callEndpoint(OWNERS[owner].endpoints.list, { params: { id } }, { signal })).snapshots,
  refetchInterval: (query: Query<Snapshot[], Error>) =>
    machineBusy || query.state.data?.some((snapshot) => snapshot.status === 'creating')
      ? DISK_POLL_MS
      : false,
});

/**
 * After a snapshot change both the list and the machine are asked again: the machine's
 * `diskOperation` is what blocks its buttons and starts the polling.
 */
const refresh = (qc: QueryClient, owner: SnapshotOwner, id: string) =>
  Promise.all([
    qc.invalidateQueries({ queryKey: snapshotsKey(owner, id) }),
    qc.invalidateQueries({ queryKey: OWNERS[owner].detailKey(id) }),
  ]);

/** Takes a snapshot in the background; no name lets the service choose one. */
export const takeSnapshotMutation = (qc: QueryClient, owner: SnapshotOwner, id: string) => ({
  mutationFn: (name: string | undefined) =>
    callEndpoint(OWNERS[owner].endpoints.create, {
      params: { id },
      body: name === undefined ? {} : { name },
    }),
  onSuccess: () => refresh(qc, owner, id),
});

export const deleteSnapshotMutation = (qc: QueryClient, owner: SnapshotOwner, id: string) => ({
  mutationFn: (snapshotId: string) =>
    callEndpoint(OWNERS[owner].endpoints.remove, { params: { id, snapshotId } }),
  onSuccess: () => refresh(qc, owner, id),
  // A refusal usually means the list is out of date (a snapshot or restore began elsewhere).
  onError: () => refresh(qc, owner, id),
});

/** Puts a stopped machine's disk back as the snapshot has it, in the background. */
export const restoreSnapshotMutation = (qc: QueryClient, owner: SnapshotOwner, id: string) => ({
  mutationFn: (snapshot: Snapshot) =>
    callEndpoint(OWNERS[owner].endpoints.restore, { params: { id, snapshotId: snapshot.id } }),
  onSuccess: () => refresh(qc, owner, id),
  onError: () => refresh(qc, owner, id),
});
