/**
 * How a process's database connections are used, read by `/metrics` at scrape time. PGlite has
 * one session, shown as a pool of one whose waiters queue for its lock (`SessionLock`).
 */
export interface PoolStatus {
  /** Connections the pool may open. */
  readonly max: number;
  /** Connections open now, in use or idle. */
  readonly open: number;
  /** Connections lent out now (a statement or a transaction holds them). */
  readonly inUse: number;
  /** Callers waiting now for a connection. */
  readonly waiting: number;
  /** Since the process started: how many callers had to wait, and for how long in all. */
  readonly waits: number;
  readonly waitSeconds: number;
}
