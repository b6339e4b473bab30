import { describe, expect, it } from 'vitest';
import {
  AttemptLimiter,
  type BackoffPolicy,
  countAttempt,
  delayAfter,
  retryAfterSeconds,
  waitMs,
} from './attempt-backoff.js';

const policy: BackoffPolicy = { free: 3, baseDelayMs: 1000, maxDelayMs: 5000, forgetMs: 60_000 };

describe('attempt backoff', () => {
  it('lets the free attempts through, then doubles the wait up to the cap', () => {
    const delays = Array.from({ length: 8 }, (_, i) => delayAfter(policy, i));
    expect(delays).toEqual([0, 0, 0, 1000, 2000, 4000, 5000, 5000]);
    expect(delayAfter(policy, 10_000)).toBe(5000);
  });

  it('measures the wait from the last counted attempt and forgets a quiet streak', () => {
    let streak = countAttempt(policy, undefined, 0);
    streak = countAttempt(policy, streak, 10);
    streak = countAttempt(policy, streak, 20);
    expect(streak).toEqual({ attempts: 3, lastAttemptAt: 20 });
    expect(waitMs(policy, streak, 20)).toBe(1000);
    expect(waitMs(policy, streak, 520)).toBe(500);
    expect(waitMs(policy, streak, 1020)).toBe(0);
    expect(waitMs(policy, streak, 20 + policy.forgetMs)).toBe(0);
    expect(countAttempt(policy, streak, 20 + policy.forgetMs)).toEqual({
      attempts: 1,
      lastAttemptAt: 20 + policy.forgetMs,
    });
  });

  it('rounds a wait up to whole seconds for Retry-After', () => {
    expect([1, 999, 1000, 1001, 0].map(retryAfterSeconds)).toEqual([1, 1, 1, 2, 1]);
  });

  it('keeps one streak per key in memory', () => {
    let now = 0;
    const limiter = new AttemptLimiter(policy, () => now);
    for (let i = 0; i < policy.free; i++) limiter.count('a');
    expect(limiter.waitMs('a')).toBe(1000);
    expect(limiter.waitMs('b')).toBe(0);
    now += 1000;
    expect(limiter.waitMs('a')).toBe(0);
  });
});
