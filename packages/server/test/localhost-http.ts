import { lookup } from 'node:dns';
import { request } from 'node:http';
import type { LookupFunction } from 'node:net';

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

/** One HTTP request to a `*.localhost` URL, redirects not followed. */
export function localRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<LocalResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, lookup: localhostLookup },
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
    req.on('error', reject);
    req.end(options.body);
  });
}
