import { randomUUID } from 'node:crypto';
import { NOTICE_KINDS, type NoticeKind, type NoticePreferences } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import type { JobQueue } from '../jobs/queue.js';
import { type NoticeEvent, sendNotice } from './notices.jobs.js';
import * as repo from './notices.repo.js';

/** An Agent's idle stop is told at most once in this long. */
export const IDLE_STOP_NOTICE_EVERY_MS = 24 * 3600_000;

type WithoutId<E> = E extends unknown ? Omit<E, 'eventId'> : never;
type Machine = { readonly id: string; readonly accountId: string };

/**
 * Notices to an account's owners and admins. Producers call these in the transaction of the
 * change they report: the `notice.send` job exists only if that change commits.
 */
export interface Notices {
  connectionFailed(tx: Executor, connection: Machine): Promise<void>;
  machineFailed(
    tx: Executor,
    kind: 'agent' | 'plain_vm',
    machine: Machine & { readonly statusReason: string | null },
  ): Promise<void>;
  /** False when one was already queued for this Agent within the last day. */
  agentIdleStopped(tx: Executor, agent: Machine): Promise<boolean>;
  subscriptionPastDue(tx: Executor, accountId: string): Promise<void>;
  /** A machine's daily backup failed on every try of its day; false when told already today. */
  backupFailed(tx: Executor, kind: 'agent' | 'plain_vm', machine: Machine): Promise<boolean>;
  /** The user's choices; every kind is on until turned off. */
  preferences(userId: string): Promise<NoticePreferences>;
  setPreferences(userId: string, choices: Partial<NoticePreferences>): Promise<NoticePreferences>;
}

export function createNotices(deps: { database: Database; clock: Clock; jobs: JobQueue }): Notices {
  const { database, clock, jobs } = deps;
  // Each event gets its id here, once: the job's retries carry it, and it is mailed once.
  const later = (tx: Executor, event: WithoutId<NoticeEvent>) =>
    jobs.enqueue(tx, sendNotice, { ...event, eventId: randomUUID() });

  const preferences = async (userId: string) => {
    const set = await repo.preferencesOf(database.db, userId);
    const chosen = new Map(set.map((row) => [row.kind, row.enabled]));
    return Object.fromEntries(
      NOTICE_KINDS.map((kind) => [kind, chosen.get(kind) ?? true]),
    ) as NoticePreferences;
  };

  return {
    async connectionFailed(tx, connection) {
      await later(tx, {
        kind: 'connection_error',
        accountId: connection.accountId,
        connectionId: connection.id,
      });
    },

    async machineFailed(tx, machineKind, machine) {
      await later(tx, {
        kind: 'machine_error',
        accountId: machine.accountId,
        machineKind,
        machineId: machine.id,
        // Clipped to the payload's bound: a failed enqueue would roll the machine's move back.
        reason: (machine.statusReason || 'unknown').slice(0, 200),
      });
    },

    async agentIdleStopped(tx, agent) {
      const at = clock.now();
      const cutoff = new Date(at.getTime() - IDLE_STOP_NOTICE_EVERY_MS);
      const kind = 'agent_idle_stopped';
      if (!(await repo.takeTurn(tx, { kind, subjectId: agent.id, at, cutoff }))) return false;
      await later(tx, { kind, accountId: agent.accountId, agentId: agent.id });
      return true;
    },

    async subscriptionPastDue(tx, accountId) {
      await later(tx, { kind: 'subscription_past_due', accountId });
    },

    async backupFailed(tx, machineKind, machine) {
      const at = clock.now();
      // Once per machine per UTC day: a turn taken before today's midnight has passed.
      const cutoff = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) - 1);
      const kind = 'backup_failed';
      if (!(await repo.takeTurn(tx, { kind, subjectId: machine.id, at, cutoff }))) return false;
      await later(tx, { kind, accountId: machine.accountId, machineKind, machineId: machine.id });
      return true;
    },

    preferences,

    async setPreferences(userId, choices) {
      const entries = Object.entries(choices).filter(
        (entry): entry is [NoticeKind, boolean] => entry[1] !== undefined,
      );
      await repo.setPreferences(
        database.db,
        userId,
        entries.map(([kind, enabled]) => ({ kind, enabled })),
      );
      return preferences(userId);
    },
  };
}
