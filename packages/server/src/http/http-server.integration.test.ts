import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { MAX_BODY_BYTES } from '../app.js';
import { startHttpServer } from './http-server.js';

interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The socket error the client saw, if the connection did not close cleanly. */
  readonly socketError?: string;
}

/**
 * Sends raw bytes on a fresh connection to 127.0.0.1 and reads until the server closes it. Bounded:
 * a server that neither answers nor closes fails the test instead of hanging it.
 */
function rawExchange(port: number, ...chunks: (string | Buffer)[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let socketError: string | undefined;
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer and no close in 10 s')));
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError = error.code ?? error.message;
    });
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) return reject(new Error(`no HTTP answer (${socketError ?? 'closed'}): ${text}`));
      const headers = Object.fromEntries(
        lines.map((line) => {
          const at = line.indexOf(':');
          return [line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      resolve({ status, headers, body, ...(socketError && { socketError }) });
    });
    for (const chunk of chunks) socket.write(chunk);
  });
}

describe('the HTTP server around the app', () => {
  let t: TestContext;
  let server: ReturnType<typeof startHttpServer>;
  let port: number;

  beforeAll(async () => {
    t = await createTestContext('pglite');
    server = startHttpServer(t.app, { port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => {
      if (server.listening) resolve();
      else server.once('listening', () => resolve());
    });
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server?.close(() => resolve());
      server?.closeAllConnections();
    });
    await t?.close();
  });

  it('answers oversized headers with 431 and the JSON envelope, then closes cleanly', async () => {
    const answer = await rawExchange(
      port,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expect(answer).toMatchObject({
      status: 431,
      headers: { 'content-type': 'application/json', connection: 'close' },
    });
    expect(JSON.parse(answer.body)).toEqual({ error: 'headers_too_large' });
    expect(answer.socketError).toBeUndefined();
  });

  it('answers a malformed request with 400 invalid_request', async () => {
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    expect(answer).toMatchObject({ status: 400, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(answer.body)).toEqual({ error: 'invalid_request' });
    expect(answer.socketError).toBeUndefined();
  });

  it('answers a too large body with 413 and Connection: close, and closes without a reset', async () => {
    const size = 8 * MAX_BODY_BYTES;
    const head = [
      'POST /api/auth/sign-in HTTP/1.1',
      'Host: 127.0.0.1',
      'Connection: keep-alive',
      'Content-Type: application/json',
      `Content-Length: ${size}`,
    ].join('\r\n');
    const answer = await rawExchange(port, `${head}\r\n\r\n`, Buffer.alloc(size, 0x20));
    expect(answer).toMatchObject({
      status: 413,
      headers: { 'content-type': 'application/json', connection: 'close' },
    });
    expect(JSON.parse(answer.body)).toEqual({ error: 'payload_too_large' });
    expect(answer.socketError).toBeUndefined();
  });

  it('refuses a too large chunked body the same way', async () => {
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const chunks = Array.from({ length: 8 }, () => [
      `${chunk.length.toString(16)}\r\n`,
      chunk,
      '\r\n',
    ]);
    const answer = await rawExchange(
      port,
      'POST /api/auth/sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      ...chunks.flat(),
      '0\r\n\r\n',
    );
    expect(answer).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(JSON.parse(answer.body)).toEqual({ error: 'payload_too_large' });
    expect(answer.socketError).toBeUndefined();
  });

  it('lets a keep-alive client read the 413 and go on with its next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: Buffer) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
          );
        });
        req.on('error', reject);
        if (body) req.setHeader('content-type', 'application/json');
        req.end(body);
      });
    try {
      const refused = await send(
        'POST',
        '/api/auth/sign-in',
        Buffer.alloc(2 * MAX_BODY_BYTES, 0x20),
      );
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.body)).toEqual({ error: 'payload_too_large' });
      for (let i = 0; i < 3; i++) expect((await send('GET', '/healthz')).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
