import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { touchActivity } from './agents.repo.js';

/** At most this many Agents' last writes are remembered; past it the oldest go first. */
const MAX_REMEMBERED = 10_000;

/**
 * What the edge reports of a person using an Agent: each request it proxies, and every
 * `intervalMs` while a proxied WebSocket (terminal, editor) stays open. Only the edge reports,
 * never the machine, which could keep itself awake.
 */
export interface AgentActivity {
  touch(agentId: string): void;
  /** How often an open WebSocket counts as activity again. */
  readonly intervalMs: number;
}

/**
 * Writes an Agent's `last_activity_at` at most once per `intervalMs` per process: a quarter of
 * an idle-stop minute (`unitMs`), so the idle time read is at most that much early. A failed
 * write is logged and dropped; the next activity writes again.
 */
export function createAgentActivity(deps: {
  database: Database;
  clock: Clock;
  log: Logger;
  unitMs: number;
}): AgentActivity {
  const intervalMs = deps.unitMs / 4;
  const lastWrites = new Map<string, number>();

  return {
    intervalMs,
    touch(agentId) {
      const at = deps.clock.now();
      const last = lastWrites.get(agentId);
      if (last !== undefined && at.getTime() - last < intervalMs) return;
      // Re-inserted at the end: the map's order is the writes' order, the oldest first out.
      lastWrites.delete(agentId);
      if (lastWrites.size >= MAX_REMEMBERED) {
        lastWrites.delete(lastWrites.keys().next().value as string);
      }
      lastWrites.set(agentId, at.getTime());
      touchActivity(deps.database.db, agentId, at).catch((err: unknown) => {
        lastWrites.delete(agentId);
        deps.log.warn({ err, agentId }, 'recording Agent activity failed');
      });
    },
  };
}
