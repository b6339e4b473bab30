import { z } from 'zod';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/**
 * Snapshots of a machine's disk (Agents and Plain VMs alike): taken in the background, listed
 * newest first, restored onto the stopped machine, and kept until deleted or the machine is.
 * Daily backups are snapshots the service takes itself, named `backup-YYYY-MM-DD`.
 */

/** At most this many snapshots of one machine by default (`SNAPSHOTS_PER_MACHINE`). */
export const DEFAULT_SNAPSHOTS_PER_MACHINE = 10;

/** `creating` until the driver has the copy; then `ready`, or `failed` with `failureReason`. */
export const SnapshotStatus = z.enum(['creating', 'ready', 'failed']);
export type SnapshotStatus = z.infer<typeof SnapshotStatus>;

/** Who took it: a person (`manual`) or the daily schedule (`backup`). */
export const SnapshotKind = z.enum(['manual', 'backup']);
export type SnapshotKind = z.infer<typeof SnapshotKind>;

export const SnapshotName = z
  .string()
  .trim()
  .min(1, 'Give the snapshot a name')
  .max(64, 'Use at most 64 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'Use letters, digits, dots, dashes and underscores, starting with a letter or digit',
  );

export const Snapshot = z.object({
  id: Id,
  name: z.string(),
  kind: SnapshotKind,
  status: SnapshotStatus,
  sizeBytes: z.number().int().nullable().meta({
    description: 'The space the snapshot holds, once `ready` (what its storage is billed by).',
  }),
  failureReason: z.string().nullable(),
  createdAt: Timestamp,
  readyAt: Timestamp.nullable(),
});
export type Snapshot = z.infer<typeof Snapshot>;

/** What a disk operation in flight blocks: lifecycle moves, other snapshots and restores. */
export const DiskOperation = z.enum(['snapshot', 'restore']).nullable().meta({
  description:
    'A snapshot being taken or restored on the machine right now: lifecycle moves, other snapshots and restores answer 409 until it ends.',
});
export type DiskOperation = z.infer<typeof DiskOperation>;

/** Daily backups: a `backup-YYYY-MM-DD` snapshot at `hourUtc`, the newest `keep` kept. */
export const BACKUPS_KEEP_MAX = 14;
export const BackupsSettings = z.strictObject({
  enabled: z.boolean(),
  keep: z.number().int().min(1).max(BACKUPS_KEEP_MAX),
});
export type BackupsSettings = z.infer<typeof BackupsSettings>;
export const Backups = BackupsSettings.extend({
  hourUtc: z.number().int().min(0).max(23).meta({
    description: 'The hour (UTC) the daily backup is taken, chosen per machine so they spread.',
  }),
});
export type Backups = z.infer<typeof Backups>;

const SnapshotParams = z.object({ id: Id, snapshotId: Id });

/**
 * The four snapshot endpoints of one machine kind; `noun` names it in summaries, `prefix` in
 * operation ids (`listAgentSnapshots`, `restorePlainVmSnapshot`, …).
 */
function snapshotEndpointsOf<const P extends 'Agent' | 'PlainVm'>(
  prefix: P,
  base: '/api/agents' | '/api/plain-vms',
  noun: string,
  tag: string,
) {
  const params = z.object({ id: Id });
  return {
    list: defineEndpoint({
      id: `list${prefix}Snapshots`,
      method: 'GET',
      path: `${base}/{id}/snapshots`,
      auth: 'session',
      tag,
      summary: `The ${noun}'s snapshots, newest first.`,
      params,
      response: { status: 200, body: z.object({ snapshots: z.array(Snapshot) }) },
      errors: [],
    }),
    create: defineEndpoint({
      id: `create${prefix}Snapshot`,
      method: 'POST',
      path: `${base}/{id}/snapshots`,
      auth: 'session',
      tag,
      summary: `Snapshot the ${noun}'s disk in the background (running where the driver allows it, else stopped: 409 says so). At most SNAPSHOTS_PER_MACHINE (\`snapshot_limit\`).`,
      params,
      body: z.strictObject({ name: SnapshotName.optional() }),
      response: { status: 202, body: Snapshot },
      errors: ['invalid_state', 'snapshot_limit'],
    }),
    remove: defineEndpoint({
      id: `delete${prefix}Snapshot`,
      method: 'DELETE',
      path: `${base}/{id}/snapshots/{snapshotId}`,
      auth: 'session',
      tag,
      summary: `Delete one of the ${noun}'s snapshots.`,
      params: SnapshotParams,
      response: { status: 204 },
      errors: ['invalid_state'],
    }),
    restore: defineEndpoint({
      id: `restore${prefix}Snapshot`,
      method: 'POST',
      path: `${base}/{id}/snapshots/{snapshotId}/restore`,
      auth: 'session',
      tag,
      summary: `Put a stopped ${noun}'s disk back as the snapshot has it (what was written since is lost), in the background; it stays stopped.`,
      params: SnapshotParams,
      response: { status: 202, body: Snapshot },
      errors: ['invalid_state'],
    }),
  };
}

export const agentSnapshots = snapshotEndpointsOf('Agent', '/api/agents', 'Agent', 'agents');
export const plainVmSnapshots = snapshotEndpointsOf(
  'PlainVm',
  '/api/plain-vms',
  'Plain VM',
  'plain-vms',
);

export const snapshotEndpoints = [
  agentSnapshots.list,
  agentSnapshots.create,
  agentSnapshots.remove,
  agentSnapshots.restore,
  plainVmSnapshots.list,
  plainVmSnapshots.create,
  plainVmSnapshots.remove,
  plainVmSnapshots.restore,
] as const;
