import type { Hono } from 'hono';

type Fetchable = Pick<Hono, 'request'>;

export interface TestResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

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

  constructor(
    readonly app: Fetchable,
    readonly origin: string,
    readonly address: string = nextAddress(),
  ) {}

  get = (path: string, options?: RequestOptions) => this.request('GET', path, options);
  post = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('POST', path, { ...options, body });
  put = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('PUT', path, { ...options, body });
  patch = (path: string, body?: unknown, options?: RequestOptions) =>
    this.request('PATCH', path, { ...options, body });
  delete = (path: string, options?: RequestOptions) => this.request('DELETE', path, options);

  async request(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    const headers = new Headers(options.headers);
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
