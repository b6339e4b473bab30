import { lookup } from 'node:dns';
import { type Agent, request } from 'node:http';
import { request as tlsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

/** Origins reached through an agent of their own (a cloud gateway's, over TLS: `useAgent`). */
const agents = new Map<string, Agent>();

/**
 * Requests to `origin` (here and in `gateway-terminal.ts`) go through `agent`: a gateway's TLS
 * connections as the service makes them (`ctx.gateways.agentFor`), its client certificate shown.
 */
export function useAgent(origin: string, agent: Agent): void {
  agents.set(origin, agent);
}

/** The agent `useAgent` gave `url`'s origin. */
export const agentOf = (url: string | URL): Agent | undefined =>
  agents.get(new URL(url).origin.replace(/^wss:/, 'https:'));

/** Resolves `*.localhost` to loopback as browsers do (the system resolver may not). */
export const localhostLookup: LookupFunction = (host, options, callback) => {
  if (!host.endsWith('.localhost')) return lookup(host, options, callback);
  if (options.all)
    return (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  callback(null, '127.0.0.1', 4);
};

export interface LocalResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** How long a request may go without an answer before it fails, saying so (never a hang). */
const SILENCE_MS = 30_000;

/** One HTTP request to a `*.localhost` URL, redirects not followed. */
export function localRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<LocalResponse> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? tlsRequest : request;
    const agent = agentOf(url);
    const req = send(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        lookup: localhostLookup,
        ...(agent && { agent }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.setTimeout(SILENCE_MS, () =>
      req.destroy(new Error(`no answer from ${url} in ${SILENCE_MS / 1000} s`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
