import type { Logger } from '../../../logger.js';
import { type PacerClock, RatePacer, systemPacerClock } from './hcloud-pacer.js';

/** An answer of Hetzner Cloud's with its error object (`code` as its documentation lists them). */
export class HcloudError extends Error {
  override name = 'HcloudError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export type Query = Readonly<
  Record<string, string | number | readonly (string | number)[] | undefined>
>;

export interface HcloudClientOptions {
  /** `https://api.hetzner.cloud/v1`, or a stand-in's. */
  readonly endpoint: string;
  readonly token: string;
  readonly log: Logger;
  readonly clock?: PacerClock;
}

/** Codes worth the same request again after a while (as hcloud-go retries them), and 5xx. */
const TRANSIENT_CODES = new Set(['conflict', 'rate_limit_exceeded', 'timeout', 'unavailable']);
const MAX_ATTEMPTS = 8;
/** An action runs on the resource: its own end is what to wait for (a server boots in ~30 s). */
const LOCKED_WAIT_MS = 120_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;
const REQUEST_TIMEOUT_MS = 30_000;
const PER_PAGE = 50;

/**
 * Hetzner Cloud's REST API: JSON in and out, the bearer token on every call, requests paced to
 * the project's rate limit, transient failures (a dropped connection, 5xx, `conflict`, 429)
 * retried with growing, jittered waits, and `locked` (another action runs on the resource)
 * retried until that action ends. Every failure is an `HcloudError`; none carries the token.
 */
export class HcloudClient {
  readonly #pacer: RatePacer;
  readonly #clock: PacerClock;

  constructor(readonly options: HcloudClientOptions) {
    this.#clock = options.clock ?? systemPacerClock;
    this.#pacer = new RatePacer(this.#clock);
  }

  /** Where the client points, for messages (never the token). */
  get location(): string {
    return this.options.endpoint;
  }

  async request<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const url = this.#url(path, options.query);
    const started = this.#clock.now();
    for (let attempt = 1; ; attempt += 1) {
      await this.#pacer.acquire();
      let failure: HcloudError;
      try {
        const response = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.options.token}`,
            ...(options.body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
          redirect: 'error',
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        this.#pacer.observe(response.headers, response.status);
        const text = await response.text();
        if (response.ok) return (text ? JSON.parse(text) : {}) as T;
        failure = errorOf(response.status, text, method, path);
      } catch (error) {
        if (error instanceof HcloudError) throw error;
        // No answer (refused, reset, timed out): the request may or may not have been done, and
        // every caller makes its work safe to repeat (names and labels find what was made).
        failure = new HcloudError(0, 'network', `${method} ${path}: ${messageOf(error)}`);
      }
      const locked = failure.code === 'locked';
      const retry = locked
        ? this.#clock.now() - started < LOCKED_WAIT_MS
        : isTransient(failure) && attempt < MAX_ATTEMPTS;
      if (!retry) throw failure;
      const delay = backoff(locked ? Math.min(attempt, 3) : attempt);
      this.options.log.debug({ code: failure.code, attempt, delay }, 'Hetzner Cloud: retrying');
      await this.#clock.sleep(delay);
    }
  }

  /** Every item of a listing, page by page (`key` names the array in each page). */
  async list<T>(path: string, key: string, query: Query = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page: number | null = 1; page !== null; ) {
      const body: Record<string, unknown> & {
        meta?: { pagination?: { next_page: number | null } };
      } = await this.request('GET', path, { query: { ...query, page, per_page: PER_PAGE } });
      items.push(...((body[key] as T[] | undefined) ?? []));
      page = body.meta?.pagination?.next_page ?? null;
    }
    return items;
  }

  #url(path: string, query: Query = {}): string {
    const url = new URL(`${this.options.endpoint.replace(/\/$/, '')}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) {
        url.searchParams.append(name, String(one));
      }
    }
    return url.toString();
  }
}

const isTransient = (error: HcloudError) =>
  error.status === 0 || error.status >= 500 || TRANSIENT_CODES.has(error.code);

/** Full jitter over a doubling cap: concurrent callers spread out instead of retrying together. */
const backoff = (attempt: number) =>
  Math.round(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));

function errorOf(status: number, text: string, method: string, path: string): HcloudError {
  let code = `http_${status}`;
  let message = text.slice(0, 200);
  let details: unknown;
  try {
    const body = JSON.parse(text) as {
      error?: { code?: string; message?: string; details?: unknown };
    };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
    details = body.error?.details;
  } catch {
    // Not JSON (a proxy's page): the status and the text's start say enough.
  }
  return new HcloudError(status, code, `${method} ${path}: ${status} ${code}: ${message}`, details);
}

const messageOf = (error: unknown) => {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
};

/** `undefined` for a resource that is not there (deleting it again is done). */
export async function ignoreMissing<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof HcloudError && error.status === 404) return undefined;
    throw error;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
