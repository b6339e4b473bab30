import http from 'node:http';
import https from 'node:https';
import { ComputeUnavailable } from '../compute-driver.js';

// No npm client: the ones published are unmaintained or pull axios/request, and the REST API is
// a handful of JSON calls over a Unix socket.

/** How long one asynchronous operation may run before waiting for it fails. */
const DEFAULT_OPERATION_TIMEOUT_S = 120;

/** A remote Incus server or cluster: its HTTPS API, with a client certificate it trusts. */
export interface IncusRemote {
  readonly url: string;
  /** PEM of the client certificate and its key (`incus config trust add-certificate`). */
  readonly cert: string;
  readonly key: string;
  /** PEM of the server's certificate (self-signed, as Incus makes them), to trust it alone. */
  readonly serverCert?: string;
}

export interface IncusClientOptions {
  /** The local daemon's Unix socket, unless `remote` is given. */
  readonly socketPath: string;
  readonly remote?: IncusRemote;
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

/** The daemon could not be reached (not running, wrong path or URL, no permission, TLS refused). */
export class IncusUnreachableError extends Error {
  override name = 'IncusUnreachableError';
  constructor(where: string, cause: NodeJS.ErrnoException) {
    super(
      `Incus is unreachable at ${where} (${cause.code ?? cause.message}); is incusd running? (npm run incus:setup)`,
    );
  }
}

/** Network and TLS faults that mean the daemon is not there for us (not a failed call). */
const UNREACHABLE = new Set([
  'ENOENT',
  'ECONNREFUSED',
  'EACCES',
  'ENOTSOCK',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export interface IncusRequest {
  readonly body?: unknown;
  /** Raw bytes instead of JSON (file pushes). */
  readonly raw?: Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
}

/** Owner and mode of a file or directory written inside an instance. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

/** What a command run inside an instance (`exec`) ended with. */
export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** What the driver needs to know of the server it talks to. */
export interface ServerFacts {
  /** Instances are placed on cluster members: a region is a cluster group. */
  readonly isClustered: boolean;
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
  readonly #agent: http.Agent;

  constructor(readonly options: IncusClientOptions) {
    const remote = options.remote;
    this.#agent = remote
      ? new https.Agent({
          keepAlive: true,
          cert: remote.cert,
          key: remote.key,
          // Incus servers present self-signed certificates: trust exactly the one given, whose
          // name is rarely the host's; without one, the system's CAs (a server behind a real CA).
          ...(remote.serverCert && {
            ca: remote.serverCert,
            checkServerIdentity: () => undefined,
          }),
        })
      : new http.Agent({ keepAlive: true });
  }

  /** Where the daemon is, for messages: its socket or its URL. */
  get location(): string {
    return this.options.remote ? this.options.remote.url : `unix socket ${this.options.socketPath}`;
  }

  /**
   * Whether the daemon answers (`GET /1.0`; `IncusUnreachableError` when not) and trusts us, and
   * what the driver needs to know of it.
   */
  async ping(): Promise<ServerFacts> {
    const server = await this.call<{
      auth?: string;
      environment?: { server_clustered?: boolean };
    }>('GET', '/1.0');
    // A remote server answers `GET /1.0` to anyone, with `auth: untrusted` for a stranger.
    if (this.options.remote && server.auth !== 'trusted') {
      throw new ComputeUnavailable(
        `Incus at ${this.location} does not trust this client certificate (INCUS_CLIENT_CERT): add it there with \`incus config trust add-certificate\``,
      );
    }
    return { isClustered: server.environment?.server_clustered === true };
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
  pushFile(
    instance: string,
    filePath: string,
    content: Buffer | string,
    owner: FileOwner,
  ): Promise<void> {
    return this.#write(instance, filePath, owner, content);
  }

  /** Makes a directory inside an instance (its parent must exist; an existing one is fine). */
  makeDirectory(instance: string, directoryPath: string, owner: FileOwner): Promise<void> {
    return this.#write(instance, directoryPath, owner);
  }

  /**
   * Runs `command` inside a running instance as root, without a terminal, and answers its exit
   * code and output (kept by Incus as the operation's logs, read back and then deleted).
   */
  async exec(instance: string, command: readonly string[]): Promise<ExecResult> {
    const base = `/1.0/instances/${encodeURIComponent(instance)}`;
    const done = await this.call<{ return?: number; output?: Record<string, string> }>(
      'POST',
      `${base}/exec`,
      {
        body: {
          command,
          'wait-for-websocket': false,
          interactive: false,
          'record-output': true,
          environment: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
        },
      },
    );
    const read = async (log: string | undefined) => {
      if (!log) return '';
      // The log's path may carry its own `?project=`: the request adds ours.
      const [logPath = log] = log.split('?');
      const { text } = await this.#http('GET', logPath, {});
      await this.#send('DELETE', logPath, {}).catch(() => {});
      return text;
    };
    const [stdout, stderr] = await Promise.all([
      read(done.output?.['1']),
      read(done.output?.['2']),
    ]);
    return { code: done.return ?? -1, stdout, stderr };
  }

  async #write(instance: string, filePath: string, owner: FileOwner, content?: Buffer | string) {
    await this.call('POST', `/1.0/instances/${encodeURIComponent(instance)}/files`, {
      query: { path: filePath },
      ...(content !== undefined && { raw: content }),
      headers: {
        ...(content === undefined
          ? { 'X-Incus-type': 'directory' }
          : {
              'Content-Type': 'application/octet-stream',
              'X-Incus-type': 'file',
              'X-Incus-write': 'overwrite',
            }),
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
    return `Incus at ${this.location}: ${what}`;
  }

  /** One request whose answer is the envelope; Incus's refusals throw `IncusError`. */
  async #send(
    method: string,
    path: string,
    request: IncusRequest,
  ): Promise<{ envelope: Envelope; etag?: string }> {
    const what = `${method} ${path}`;
    const { status, text, etag } = await this.#http(method, path, request);
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      throw new IncusError(status, `not a JSON answer (HTTP ${status})`, this.#where(what));
    }
    if (envelope.type === 'error' || status >= 400) {
      throw new IncusError(status, envelope.error || `HTTP ${status}`, this.#where(what));
    }
    return { envelope, ...(etag && { etag }) };
  }

  /** One HTTP exchange with the daemon: the status, the body as text, the ETag. */
  #http(
    method: string,
    path: string,
    request: IncusRequest,
  ): Promise<{ status: number; text: string; etag?: string }> {
    // A listing across all projects takes no project (Incus refuses both).
    const allProjects = request.query?.['all-projects'] === 'true';
    const query = new URLSearchParams({
      ...request.query,
      ...(!allProjects && { project: this.options.project }),
    });
    const body =
      request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
    const headers: Record<string, string> = {
      ...(request.body !== undefined && { 'Content-Type': 'application/json' }),
      ...request.headers,
    };
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    const what = `${method} ${path}`;
    return new Promise((resolve, reject) => {
      const remote = this.options.remote;
      const request = remote ? https.request : http.request;
      const req = request(
        {
          ...(remote
            ? { host: new URL(remote.url).hostname, port: new URL(remote.url).port || 8443 }
            : { socketPath: this.options.socketPath }),
          ...(remote && { protocol: 'https:' }),
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
            const etag = res.headers.etag;
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
              ...(etag && { etag }),
            });
          });
        },
      );
      // Longer than any operation wait, so only a daemon that stopped answering trips it.
      const timeoutS = (this.options.operationTimeoutS ?? DEFAULT_OPERATION_TIMEOUT_S) + 30;
      req.setTimeout(timeoutS * 1000, () =>
        req.destroy(new Error(`${this.#where(what)}: no answer within ${timeoutS} s`)),
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        const isUnreachable = UNREACHABLE.has(error.code ?? '');
        reject(isUnreachable ? new IncusUnreachableError(this.location, error) : error);
      });
      req.end(body);
    });
  }
}

/** True when Incus answered that the thing asked for does not exist. */
export const isNotFound = (error: unknown): boolean =>
  error instanceof IncusError && error.status === 404;
