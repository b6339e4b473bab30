import {
  type Endpoint,
  type EndpointCallArgs,
  type EndpointResult,
  ErrorEnvelope,
  endpointRequest,
} from '@svc/contract';
import type { Hono } from 'hono';

type Fetchable = Pick<Hono, 'request'>;

/** An answer: its body is the JSON that arrived (or the text), typed by the call that got it. */
export interface TestResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

/**
 * What a raw-path call (`get`, `post`, …) answers. Its body is `unknown`: a test that checks the
 * contract calls the endpoint by its descriptor (`call`, `callError`, `send`) instead, and keeps a
 * raw path only to send something malformed or to check routing itself (it then matches the body
 * with `toMatchObject`, or reads an error through `errorOf`).
 */
export type RawResponse = TestResponse<unknown>;

/** A descriptor call's input (only the parts the endpoint has), then the request's options. */
type CallArgs<E extends Endpoint> = [...EndpointCallArgs<E>, options?: RequestOptions];

let clients = 0;

/** A client address of its own for each new client (198.18.0.0/15 is for tests). */
const nextAddress = () => {
  clients += 1;
  return `198.18.${(clients >> 8) & 255}.${clients & 255}`;
};

/**
 * Calls the app in memory like a browser on the dashboard's origin would: it keeps cookies and
 * sends `Origin` on unsafe requests (pass `origin: null` to send none). Each client connects from
 * an address of its own, as @hono/node-server would report it, unless one is given.
 */
export class TestClient {
  readonly cookies = new Map<string, string>();
  /** Options every request of this client carries (a call's own take precedence). */
  #defaults: RequestOptions = {};

  constructor(
    readonly app: Fetchable,
    readonly origin: string,
    readonly address: string = nextAddress(),
  ) {}

  /** This client, its requests carrying `options` from now on (an Agent's token, say). */
  withDefaults(options: RequestOptions): this {
    this.#defaults = options;
    return this;
  }

  /**
   * Calls `endpoint` from its descriptor (path template filled, query and body written as the
   * clients write them) and expects its success: a different status, or a body the response schema
   * refuses, fails the test with the answer shown. The body is the JSON as it arrived (nothing the
   * schema does not name is stripped, so a test can still see a field that must not be there),
   * typed by the descriptor.
   */
  call = async <E extends Endpoint>(
    endpoint: E,
    ...args: CallArgs<E>
  ): Promise<TestResponse<EndpointResult<E>>> => {
    const res = await this.send(endpoint, ...args);
    const where = `${endpoint.method} ${endpoint.path}`;
    if (res.status !== endpoint.response.status) {
      throw new Error(
        `${where} answered ${res.status}, not ${endpoint.response.status}: ${JSON.stringify(res.body)}`,
      );
    }
    const checked = endpoint.response.body?.safeParse(res.body);
    if (checked && !checked.success) {
      throw new Error(`${where} answered a body its schema refuses: ${checked.error.message}`);
    }
    return res as TestResponse<EndpointResult<E>>;
  };

  /**
   * Calls `endpoint` from its descriptor and expects a refusal: the success status, or a body that
   * is not the error envelope, fails the test. The body is typed as the envelope.
   */
  callError = async <E extends Endpoint>(
    endpoint: E,
    ...args: CallArgs<E>
  ): Promise<TestResponse<ErrorEnvelope>> => {
    const res = await this.send(endpoint, ...args);
    const where = `${endpoint.method} ${endpoint.path}`;
    if (res.status === endpoint.response.status || !ErrorEnvelope.safeParse(res.body).success) {
      throw new Error(
        `${where} answered ${res.status} ${JSON.stringify(res.body)}, not an error envelope`,
      );
    }
    return res as TestResponse<ErrorEnvelope>;
  };

  /**
   * Calls `endpoint` from its descriptor and takes whatever comes back, its body `unknown`: for a
   * test that decides between success and refusal itself (`toMatchObject({ status, body })`).
   */
  send = async <E extends Endpoint>(
    endpoint: E,
    ...args: CallArgs<E>
  ): Promise<TestResponse<unknown>> => {
    const [input, options = {}] = args as unknown as [
      Parameters<typeof endpointRequest<E>>[1],
      RequestOptions | undefined,
    ];
    const request = endpointRequest(endpoint, ...([input] as EndpointCallArgs<E>));
    return this.request(request.method, request.url, {
      ...options,
      headers: { ...request.headers, ...headersRecord(options.headers) },
      ...(request.body !== undefined && { rawBody: request.body }),
    });
  };

  get = (path: string, options?: RequestOptions) => this.request('GET', path, options);
  post = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('POST', path, { ...options, body });
  put = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('PUT', path, { ...options, body });
  patch = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('PATCH', path, { ...options, body });
  delete = (path: string, options?: RequestOptions) => this.request('DELETE', path, options);

  async request(method: string, path: string, own: RequestOptions = {}): Promise<RawResponse> {
    const options = { ...this.#defaults, ...own };
    const headers = new Headers(this.#defaults.headers);
    for (const [name, value] of Object.entries(headersRecord(own.headers)))
      headers.set(name, value);
    if (this.cookies.size > 0 && !headers.has('cookie')) {
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    const origin = options.origin === undefined ? this.origin : options.origin;
    if (method !== 'GET' && origin !== null && !headers.has('origin'))
      headers.set('origin', origin);
    let body: RequestInit['body'] | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    const res = await this.app.request(
      path,
      { method, headers, ...(body !== undefined && { body }) },
      // What @hono/node-server hands the app: `getConnInfo` reads the peer from it.
      { incoming: { socket: { remoteAddress: this.address } } },
    );
    this.#keepCookies(res.headers);
    const text = await res.text();
    const isJson = res.headers.get('content-type')?.includes('json');
    return {
      status: res.status,
      headers: res.headers,
      body: isJson && text ? JSON.parse(text) : text,
    };
  }

  #keepCookies(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      const expired = attributes.some((a) => /max-age=0\b/i.test(a.trim())) || value === '';
      if (expired) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value.trim());
    }
  }
}

export interface RequestOptions {
  readonly headers?: ConstructorParameters<typeof Headers>[0];
  readonly body?: unknown;
  readonly rawBody?: RequestInit['body'];
  /** The `Origin` header for unsafe methods; `null` sends none. Default: the dashboard's. */
  readonly origin?: string | null;
}

/** Headers as a plain record, through forEach: the benchmarks' type library has no iterable Headers. */
function headersRecord(init: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
  const record: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * The error envelope of a raw-path answer, for a test that sent something no descriptor can
 * (a malformed body, a forged header): anything but the envelope fails the test with the answer.
 */
export function errorOf(res: RawResponse): ErrorEnvelope {
  const parsed = ErrorEnvelope.safeParse(res.body);
  if (!parsed.success) {
    throw new Error(`answered ${res.status} ${JSON.stringify(res.body)}, not an error envelope`);
  }
  return parsed.data;
}
