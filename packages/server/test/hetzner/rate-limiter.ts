/** Token bucket settings: `limit` requests in a burst, `refillPerSecond` back each second. */
export interface RateLimit {
  readonly limit: number;
  readonly refillPerSecond: number;
}

/** Hetzner's default: 3,600 requests per hour and project, refilled one per second. */
export const DEFAULT_RATE_LIMIT: RateLimit = { limit: 3600, refillPerSecond: 1 };

export interface RateDecision {
  readonly allowed: boolean;
  /** The `RateLimit-*` headers every answer carries. */
  readonly headers: Record<string, string>;
}

/** One bucket per token (Hetzner counts per project; a token belongs to one project). */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(private readonly rate: RateLimit) {}

  take(key: string, nowMs = Date.now()): RateDecision {
    const bucket = this.buckets.get(key) ?? { tokens: this.rate.limit, atMs: nowMs };
    const refilled = ((nowMs - bucket.atMs) / 1000) * this.rate.refillPerSecond;
    bucket.tokens = Math.min(this.rate.limit, bucket.tokens + refilled);
    bucket.atMs = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    const secondsToFull = (this.rate.limit - bucket.tokens) / this.rate.refillPerSecond;
    return {
      allowed,
      headers: {
        'RateLimit-Limit': String(this.rate.limit),
        'RateLimit-Remaining': String(Math.floor(bucket.tokens)),
        'RateLimit-Reset': String(Math.ceil(nowMs / 1000 + secondsToFull)),
      },
    };
  }
}
