import type { Executor } from '../db/database.js';

/**
 * The refresh lease: a guarded UPDATE takes it when nobody holds it (or the holder's lease ran
 * out, e.g. its process died), so at most one process refreshes a connection at a time.
 */
export const takeRefreshLease = (
  db: Executor,
  id: string,
  lease: { owner: string; now: Date; until: Date },
) =>
  db
    .updateTable('appConnections')
    .set({ refreshLeaseOwner: lease.owner, refreshLeaseUntil: lease.until })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where((eb) =>
      eb.or([eb('refreshLeaseUntil', 'is', null), eb('refreshLeaseUntil', '<', lease.now)]),
    )
    .returningAll()
    .executeTakeFirst();

/** Gives the lease back; `failedAt` tells waiters in other processes that this attempt failed. */
export const releaseRefreshLease = (db: Executor, id: string, owner: string, failedAt?: Date) =>
  db
    .updateTable('appConnections')
    .set({
      refreshLeaseOwner: null,
      refreshLeaseUntil: null,
      ...(failedAt && { refreshFailedAt: failedAt }),
    })
    .where('id', '=', id)
    .where('refreshLeaseOwner', '=', owner)
    .execute();

/**
 * Stores a refresh's result and releases the lease, guarded by the refresh token that was used:
 * whoever presented that token to the provider is the one whose answer counts.
 */
export const storeRefreshedTokens = (
  db: Executor,
  id: string,
  usedRefreshToken: string,
  next: {
    accessToken: string;
    refreshToken: string;
    accessTokenExpiresAt: Date;
    accessTokenLifetimeSeconds: number;
    scopes: string[];
    updatedAt: Date;
  },
) =>
  db
    .updateTable('appConnections')
    .set({
      ...next,
      refreshLeaseOwner: null,
      refreshLeaseUntil: null,
      refreshFailedAt: null,
    })
    .where('id', '=', id)
    .where('refreshToken', '=', usedRefreshToken)
    .returningAll()
    .executeTakeFirst();

/** Marks the connection dead, unless its refresh token changed meanwhile (then it was a race). */
export const markConnectionDead = (
  db: Executor,
  id: string,
  usedRefreshToken: string | null,
  now: Date,
) =>
  db
    .updateTable('appConnections')
    .set({ status: 'error', refreshLeaseOwner: null, refreshLeaseUntil: null, updatedAt: now })
    .where('id', '=', id)
    // Already dead: no second move, so no second notice.
    .where('status', '!=', 'error')
    .where((eb) =>
      usedRefreshToken === null
        ? eb('refreshToken', 'is', null)
        : eb('refreshToken', '=', usedRefreshToken),
    )
    .executeTakeFirst();

/** `code` tokens live until a year after their last use; remember the use. */
export const touchTokenRequest = (db: Executor, id: string, now: Date) =>
  db.updateTable('appConnections').set({ tokenRequestedAt: now }).where('id', '=', id).execute();
