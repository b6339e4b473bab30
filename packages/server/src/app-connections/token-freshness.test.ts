import { describe, expect, it } from 'vitest';
import { accessTokenLifetime, freshForMs, isFresh } from './token-freshness.js';

describe('the cache rule: fresh while more than min(5 minutes, half the lifetime) is left', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const row = (leftMs: number, lifetimeSeconds: number | null) => ({
    accessTokenExpiresAt: new Date(now.getTime() + leftMs),
    accessTokenLifetimeSeconds: lifetimeSeconds,
  });

  it.each([
    [60, 30_000],
    [300, 150_000],
    [600, 300_000],
    [3600, 300_000],
    [0, 0],
    [null, 300_000],
  ])('a lifetime of %s s: fresh for more than %s ms', (lifetime, expected) => {
    expect(freshForMs(lifetime)).toBe(expected);
  });

  it('60-second tokens: 31 s left is fresh, 30 s and 29 s are not', () => {
    expect(isFresh(row(31_000, 60), now)).toBe(true);
    expect(isFresh(row(30_000, 60), now)).toBe(false);
    expect(isFresh(row(29_000, 60), now)).toBe(false);
  });

  it('hour-long tokens keep the 5-minute margin', () => {
    expect(isFresh(row(5 * 60_000 + 1, 3600), now)).toBe(true);
    expect(isFresh(row(4 * 60_000, 3600), now)).toBe(false);
  });

  it('a token without an expiry is never fresh (it is not cached)', () => {
    expect(isFresh({ accessTokenExpiresAt: null, accessTokenLifetimeSeconds: 60 }, now)).toBe(
      false,
    );
  });

  it('the lifetime comes from expires_in, an hour when the response has none', () => {
    expect(accessTokenLifetime({ expires_in: 60 })).toEqual({ seconds: 60, ms: 60_000 });
    expect(accessTokenLifetime({})).toEqual({ seconds: 3600, ms: 3_600_000 });
    expect(accessTokenLifetime({ expires_in: -5 })).toEqual({ seconds: 0, ms: 0 });
  });
});
