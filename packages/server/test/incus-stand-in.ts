import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A request as the stand-in saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export type StandInAnswer = (request: SeenRequest, res: http.ServerResponse) => void;

/**
 * A stand-in for the Incus daemon on a Unix socket of its own, for the protocol handling of
 * what talks to it; each test says how it answers. The real daemon is exercised by the
 * `*.incus.test.ts` files.
 */
export async function startIncusStandIn(answer: StandInAnswer) {
  const dir = await mkdtemp(path.join(tmpdir(), 'incus-stand-in-'));
  const socketPath = path.join(dir, 'unix.socket');
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    dir,
    socketPath,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Answers like Incus: its JSON envelope, with an ETag. */
export function sendIncusJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  etag = '"v1"',
) {
  res.writeHead(status, { 'Content-Type': 'application/json', ETag: etag });
  res.end(JSON.stringify(body));
}
