import http from 'node:http';

// No npm client: the ones published are unmaintained or pull axios/request, and the REST API is
// a handful of JSON calls over a Unix socket.

/** How long one asynchronous operation may run before waiting for it fails. */
const DEFAULT_OPERATION_TIMEOUT_S = 120;

export interface IncusClientOptions {
  readonly socketPath: string;
  /** Every request is scoped to this Incus project. */
  readonly project: string;
  readonly operationTimeoutS?: number;
}

/** What Incus answered, in its own words, with the call it answered (never a request body). */
export class IncusError extends Error {
  override name = 'IncusError';
  constructor(
    readonly status: number,
    readonly incusMessage: string,
    where: string,
  ) {
    super(`${where}: ${incusMessage}`);
  }
}

/** The socket itself could not be reached (daemon not running, wrong path, no permission). */
export class IncusUnreachableError extends Error {
  override name = 'IncusUnreachableError';
  constructor(socketPath: string, cause: NodeJS.ErrnoException) {
    super(
      `Incus is unreachable at unix socket ${socketPath} (${cause.code ?? cause.message}); is incusd running? (npm run incus:setup)`,
    );
  }
}

export interface IncusRequest {
  readonly body?: unknown;
  /** Raw bytes instead of JSON (file pushes). */
  readonly raw?: Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
}

export interface IncusResponse<T> {
  readonly metadata: T;
  readonly etag?: string;
}

interface Envelope {
  type: 'sync' | 'async' | 'error';
  status_code: number;
  error?: string;
  metadata: unknown;
}

interface Operation {
  id: string;
  status_code: number;
  err?: string;
  metadata?: unknown;
}

/** JSON over the Incus REST API (`/1.0/...`) on its Unix socket; operations are awaited. */
export class IncusClient {
  readonly #agent = new http.Agent({ keepAlive: true });

  constructor(readonly options: IncusClientOptions) {}

  /** Whether the daemon answers (`GET /1.0`); throws `IncusUnreachableError` when not. */
  async ping(): Promise<void> {
    await this.call('GET', '/1.0');
  }

  /**
   * One call; an asynchronous answer is followed to its operation's end, whose failure throws
   * like a synchronous one. Answers the metadata (of the operation, for asynchronous calls).
   */
  async call<T = unknown>(method: string, path: string, request: IncusRequest = {}): Promise<T> {
    return (await this.request<T>(method, path, request)).metadata;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    request: IncusRequest = {},
  ): Promise<IncusResponse<T>> {
    const { envelope, etag } = await this.#send(method, path, request);
    if (envelope.type !== 'async')
      return { metadata: envelope.metadata as T, ...(etag && { etag }) };
    const operation = envelope.metadata as Operation;
    return { metadata: (await this.#wait(operation.id, `${method} ${path}`)) as T };
  }

  /** Writes a file inside an instance through the file API (never through the host's disk). */
  async pushFile(
    instance: string,
    filePath: string,
    content: Buffer | string,
    owner: { readonly uid: number; readonly gid: number; readonly mode: number },
  ): Promise<void> {
    await this.call('POST', `/1.0/instances/${encodeURIComponent(instance)}/files`, {
      query: { path: filePath },
      raw: content,
      headers: {
        'Content-Type': 'application/octet-stream',
        'X-Incus-type': 'file',
        'X-Incus-write': 'overwrite',
        'X-Incus-uid': String(owner.uid),
        'X-Incus-gid': String(owner.gid),
        'X-Incus-mode': owner.mode.toString(8).padStart(4, '0'),
      },
    });
  }

  close(): void {
    this.#agent.destroy();
  }

  async #wait(id: string, what: string): Promise<unknown> {
    const timeout = this.options.operationTimeoutS ?? DEFAULT_OPERATION_TIMEOUT_S;
    const { envelope } = await this.#send('GET', `/1.0/operations/${id}/wait`, {
      query: { timeout: String(timeout) },
    });
    const operation = envelope.metadata as Operation;
    // 200 Success; anything else (400 Failure, 401 Cancelled, or still 103 Running after the
    // timeout) is the call's failure.
    if (operation.status_code === 200) return operation.metadata;
    const message =
      operation.err ||
      (operation.status_code === 103 ? `still running after ${timeout} s` : 'operation failed');
    throw new IncusError(operation.status_code, message, this.#where(what));
  }

  #where(what: string): string {
    return `Incus at ${this.options.socketPath}: ${what}`;
  }

  #send(
    method: string,
    path: string,
    request: IncusRequest,
  ): Promise<{ envelope: Envelope; etag?: string }> {
    const query = new URLSearchParams({ ...request.query, project: this.options.project });
    const body =
      request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
    const headers: Record<string, string> = {
      ...(request.body !== undefined && { 'Content-Type': 'application/json' }),
      ...request.headers,
    };
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    const what = `${method} ${path}`;
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          socketPath: this.options.socketPath,
          agent: this.#agent,
          method,
          path: `${path}?${query}`,
          headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            let envelope: Envelope;
            try {
              envelope = JSON.parse(text) as Envelope;
            } catch {
              reject(
                new IncusError(status, `not a JSON answer (HTTP ${status})`, this.#where(what)),
              );
              return;
            }
            if (envelope.type === 'error' || status >= 400) {
              const message = envelope.error || `HTTP ${status}`;
              reject(new IncusError(status, message, this.#where(what)));
              return;
            }
            const etag = res.headers.etag;
            resolve({ envelope, ...(etag && { etag }) });
          });
        },
      );
      // Longer than any operation wait, so only a daemon that stopped answering trips it.
      const timeoutS = (this.options.operationTimeoutS ?? DEFAULT_OPERATION_TIMEOUT_S) + 30;
      req.setTimeout(timeoutS * 1000, () =>
        req.destroy(new Error(`${this.#where(what)}: no answer within ${timeoutS} s`)),
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        const isSocketFault = ['ENOENT', 'ECONNREFUSED', 'EACCES', 'ENOTSOCK'].includes(
          error.code ?? '',
        );
        reject(isSocketFault ? new IncusUnreachableError(this.options.socketPath, error) : error);
      });
      req.end(body);
    });
  }
}

/** True when Incus answered that the thing asked for does not exist. */
export const isNotFound = (error: unknown): boolean =>
  error instanceof IncusError && error.status === 404;
