import type { AddressInfo } from 'node:net';
import { createServer, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRetrying } from './connect-retrying.js';

/** A connection attempt that fails as the kernel fails one with no route (`code`). */
const failing = (code: string) => () => {
  const socket = new Socket();
  process.nextTick(() => socket.destroy(Object.assign(new Error(`connect ${code}`), { code })));
  return socket;
};

describe('connectRetrying', () => {
  const server = createServer((socket) => socket.end());
  let port: number;
  let accepted = 0;
  server.on('connection', () => accepted++);
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('tries again after a moment when no route was found, and reaches the server', async () => {
    const { connect } = await import('node:net');
    let tries = 0;
    const socket = await connectRetrying({
      host: '127.0.0.1',
      port,
      timeoutMs: 5_000,
      dial: (target) => (++tries === 1 ? failing('EHOSTUNREACH')() : connect(target)),
    });
    expect(tries).toBe(2);
    expect(socket.remotePort).toBe(port);
    socket.destroy();
    expect(accepted).toBe(1);
  });

  it('gives up after two more tries', async () => {
    let tries = 0;
    const dial = () => {
      tries++;
      return failing('ENETUNREACH')();
    };
    await expect(
      connectRetrying({ host: '127.0.0.1', port, timeoutMs: 5_000, dial }),
    ).rejects.toMatchObject({ code: 'ENETUNREACH' });
    expect(tries).toBe(3);
  });

  it('does not try a refused connection again', async () => {
    let tries = 0;
    const dial = () => {
      tries++;
      return failing('ECONNREFUSED')();
    };
    await expect(
      connectRetrying({ host: '127.0.0.1', port, timeoutMs: 5_000, dial }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(tries).toBe(1);
  });
});
