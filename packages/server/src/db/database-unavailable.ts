import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * The database could not be reached, or went away under a statement: nothing about the request
 * was wrong, and the same request may succeed in a moment (`503 unavailable` with `Retry-After`).
 */
export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
  constructor(
    cause: unknown,
    /**
     * `connect`: no connection was had, so nothing of the request was done (worth retrying).
     * `statement`: lost under a statement, perhaps its commit: the outcome is unknown.
     */
    readonly phase: 'connect' | 'statement',
  ) {
    super(`the database is unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** Socket-level failures of a connection to the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/**
 * PostgreSQL's codes for a server that is going or not there yet: class 08 (connection
 * exception), `admin_shutdown`, `crash_shutdown`, `cannot_connect_now`, `too_many_connections`.
 */
const SERVER_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // Class 08 without 08P01 (protocol_violation), which a bug of ours can cause.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
/** node-postgres says these in words only. */
const LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/** Whether `error` says the database is out of reach (rather than that a statement failed). */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code))) return true;
  return LOST.test(error.message);
}

const translated = (error: unknown, phase: DatabaseUnavailable['phase']) =>
  isConnectionLoss(error) ? new DatabaseUnavailable(error, phase) : error;

/**
 * The pool as Kysely sees it, every loss of the database turned into `DatabaseUnavailable`: on
 * connecting, and on a statement whose connection went away. Other errors pass as they are.
 */
export function guardedPool(pool: {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
}): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect().catch((error: unknown) => {
        throw translated(error, 'connect');
      });
      // A connection that was lost goes back with its error, so the pool drops it.
      let lost: Error | undefined;
      // node-postgres listens for a connection's errors only while it is idle in the pool: one
      // lost while held between statements (a transaction waiting on other work when the server
      // shuts down) would be an unhandled 'error' event, which ends the process. Its next
      // statement fails (503), and it goes back as lost.
      const onError = (error: Error) => {
        lost ??= new DatabaseUnavailable(error, 'statement');
      };
      client.on('error', onError);
      return {
        query: ((...args: Parameters<pg.PoolClient['query']>) =>
          (client.query as (...a: unknown[]) => Promise<unknown>)(...args).catch(
            (error: unknown) => {
              const thrown = translated(error, 'statement');
              if (thrown instanceof DatabaseUnavailable) lost = thrown;
              throw thrown;
            },
          )) as PostgresPoolClient['query'],
        release: () => {
          client.removeListener('error', onError);
          client.release(lost);
        },
      };
    },
    end: () => pool.end(),
  };
}
