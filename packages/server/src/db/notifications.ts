import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import pg from 'pg';
import type { Executor } from './database.js';
import type { SessionLock } from './session-lock.js';

/** Called with each notification's payload on a channel. */
export type OnNotification = (payload: string) => void;

/**
 * PostgreSQL's LISTEN/NOTIFY, the way processes of one database tell each other that something
 * they may hold in memory changed (an Agent's route, …). A notification sent inside a
 * transaction is delivered when it commits, and not at all if it rolls back.
 */
export interface Notifications {
  /**
   * Calls `onNotification` for each notification on `channel`, this process's own included, and
   * `onReconnect` after the listening connection came back from a loss (anything sent
   * meanwhile was missed: drop what it would have told). Resolves once listening.
   */
  listen(channel: string, onNotification: OnNotification, onReconnect?: () => void): Promise<void>;
  close(): Promise<void>;
}

/** Sends `payload` on `channel` (in `executor`'s transaction, if it is one). */
export async function notify(executor: Executor, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(executor);
}

/** PGlite: one process's database, its notifications delivered in that process. */
export function pgliteNotifications(pglite: PGlite, lock: SessionLock): Notifications {
  const stops: (() => Promise<void>)[] = [];
  return {
    async listen(channel, onNotification) {
      stops.push(await lock.run(() => pglite.listen(channel, onNotification)));
    },
    async close() {
      for (const stop of stops.splice(0)) await lock.run(stop).catch(() => {});
    },
  };
}

/** How long after a lost connection the next try waits, doubling up to the last. */
const RECONNECT_DELAYS_MS = [100, 250, 500, 1_000, 2_000, 5_000];

/**
 * PostgreSQL: one connection of its own (a pooled one would be handed to other queries), which
 * is opened again after any loss (a restarted server) with a short back-off, listening on every
 * channel again and telling each listener it may have missed something.
 */
export function postgresNotifications(url: string, onError: (error: Error) => void): Notifications {
  const channels = new Map<string, { onNotification: OnNotification; onReconnect?: () => void }>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let failures = 0;

  async function open(): Promise<pg.Client> {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', ({ channel, payload }) => {
      channels.get(channel)?.onNotification(payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      lost(next);
    });
    next.on('end', () => lost(next));
    try {
      await next.connect();
      for (const channel of channels.keys()) await next.query(`LISTEN ${quoted(channel)}`);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    return next;
  }

  /** Opens the connection, trying again until it opens or the notifications are closed. */
  function connect(reconnected: boolean): Promise<pg.Client> {
    connecting ??= (async () => {
      for (;;) {
        try {
          const opened = await open();
          // Closed while it opened: it must not outlive the close.
          if (closed) {
            await opened.end().catch(() => {});
            throw new Error('notifications closed');
          }
          client = opened;
          failures = 0;
          if (reconnected) for (const { onReconnect } of channels.values()) onReconnect?.();
          return client;
        } catch (error) {
          if (closed) throw error;
          onError(error as Error);
          const delay = RECONNECT_DELAYS_MS[Math.min(failures, RECONNECT_DELAYS_MS.length - 1)];
          failures += 1;
          await new Promise((resolve) => setTimeout(resolve, delay).unref());
        }
      }
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  function lost(which: pg.Client) {
    if (client !== which || closed) return;
    client = undefined;
    void which.end().catch(() => {});
    void connect(true).catch(() => {});
  }

  return {
    async listen(channel, onNotification, onReconnect) {
      channels.set(channel, { onNotification, ...(onReconnect && { onReconnect }) });
      const current = client ?? (await connect(false));
      await current.query(`LISTEN ${quoted(channel)}`);
    },
    async close() {
      closed = true;
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}

/** A channel name as an SQL identifier (LISTEN takes no parameters). */
const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;
