import type { AppConnectionRow } from '../db/schema.js';

/** At most this must be left for a cached token to be handed out (docs/reference.md#app-connections). */
export const FRESH_FOR_MS = 5 * 60_000;

/** Without `expires_in` in a token response, the token is taken to live an hour. */
const DEFAULT_LIFETIME_SECONDS = 3600;

/** The lifetime a token response gives its access token (`expires_in`), whole seconds. */
export function accessTokenLifetime(tokens: { expires_in?: number | undefined }) {
  const seconds = Math.max(0, Math.round(tokens.expires_in ?? DEFAULT_LIFETIME_SECONDS));
  return { seconds, ms: seconds * 1000 };
}

/**
 * How much must be left for a token to be answered from the row: `min(5 minutes, half its
 * lifetime)`. A flat 5 minutes would make a token that lives 5 minutes or less stale the moment
 * it arrives, and every request would refresh. Rows stored before lifetimes were kept (`null`)
 * use the flat rule until their next refresh.
 */
export const freshForMs = (lifetimeSeconds: number | null) =>
  lifetimeSeconds === null ? FRESH_FOR_MS : Math.min(FRESH_FOR_MS, (lifetimeSeconds * 1000) / 2);

type TokenTimes = Pick<AppConnectionRow, 'accessTokenExpiresAt' | 'accessTokenLifetimeSeconds'>;

/** Whether the stored access token may be handed out as it is at `now`. */
export const isFresh = (row: TokenTimes, now: Date) =>
  row.accessTokenExpiresAt !== null &&
  row.accessTokenExpiresAt.getTime() - now.getTime() > freshForMs(row.accessTokenLifetimeSeconds);
