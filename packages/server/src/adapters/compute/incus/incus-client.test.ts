import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  sendIncusJson as json,
  type SeenRequest as Seen,
  type StandInAnswer,
  startIncusStandIn,
} from '../../../../test/incus-stand-in.js';
import { IncusClient, IncusError, IncusUnreachableError } from './incus-client.js';

let standIn: Awaited<ReturnType<typeof startIncusStandIn>>;
let socketPath: string;
let dir: string;
let seen: Seen[];
let answer: StandInAnswer;

/** The error `promise` rejects with; a promise that resolves fails the test. */
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as IncusError,
  );

beforeEach(async () => {
  standIn = await startIncusStandIn((request, res) => answer(request, res));
  ({ socketPath, dir, seen } = standIn);
});

afterEach(() => standIn.close());

describe('IncusClient', () => {
  it('sends JSON in the project and answers the metadata with its ETag', async () => {
    answer = (_req, res) =>
      json(res, 200, { type: 'sync', status_code: 200, metadata: { name: 'svc-a' } });
    const client = new IncusClient({ socketPath, project: 'svc' });
    const response = await client.request('PUT', '/1.0/instances/svc-a', {
      body: { config: { 'limits.cpu': '1' } },
      query: { recursion: '1' },
    });
    client.close();
    expect(response).toEqual({ metadata: { name: 'svc-a' }, etag: '"v1"' });
    expect(seen).toHaveLength(1);
    const [request] = seen as [Seen];
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('/1.0/instances/svc-a?recursion=1&project=svc');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ config: { 'limits.cpu': '1' } });
  });

  it('waits for an asynchronous call to end and throws its failure with Incus’s message', async () => {
    answer = (req, res) => {
      if (req.url.startsWith('/1.0/operations/op-1/wait')) {
        json(res, 200, {
          type: 'sync',
          status_code: 200,
          metadata: { id: 'op-1', status_code: 400, err: 'Failed creating instance: no space' },
        });
      } else if (req.url.startsWith('/1.0/operations/op-2/wait')) {
        json(res, 200, {
          type: 'sync',
          status_code: 200,
          metadata: { id: 'op-2', status_code: 200, metadata: { done: true } },
        });
      } else {
        const id = req.method === 'POST' ? 'op-1' : 'op-2';
        json(res, 202, { type: 'async', status_code: 100, metadata: { id, status_code: 103 } });
      }
    };
    const client = new IncusClient({ socketPath, project: 'default', operationTimeoutS: 7 });
    const failure = await failureOf(client.call('POST', '/1.0/instances', { body: {} }));
    expect(failure).toBeInstanceOf(IncusError);
    expect(failure.message).toBe(
      `Incus at unix socket ${socketPath}: POST /1.0/instances: Failed creating instance: no space`,
    );
    expect(await client.call('PUT', '/1.0/instances/svc-a/state', { body: {} })).toEqual({
      done: true,
    });
    client.close();
    expect(seen.map((request) => request.url)).toContain(
      '/1.0/operations/op-1/wait?timeout=7&project=default',
    );
  });

  it('turns an error answer into an IncusError with its status, never echoing the body', async () => {
    answer = (_req, res) =>
      json(res, 404, { type: 'error', error_code: 404, error: 'Instance not found' });
    const client = new IncusClient({ socketPath, project: 'default' });
    const failure = await failureOf(
      client.call('PUT', '/1.0/instances/svc-b', { body: { secret: 'do-not-print' } }),
    );
    client.close();
    expect(failure).toBeInstanceOf(IncusError);
    expect(failure.status).toBe(404);
    expect(failure.message).toBe(
      `Incus at unix socket ${socketPath}: PUT /1.0/instances/svc-b: Instance not found`,
    );
    expect(failure.message).not.toContain('do-not-print');
  });

  it('pushes a file with its owner and mode as raw bytes', async () => {
    answer = (_req, res) => json(res, 200, { type: 'sync', status_code: 200, metadata: {} });
    const client = new IncusClient({ socketPath, project: 'default' });
    await client.pushFile('svc-a', '/etc/machine-id', 'abc\n', { uid: 0, gid: 0, mode: 0o444 });
    client.close();
    const [request] = seen as [Seen];
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/1.0/instances/svc-a/files?path=%2Fetc%2Fmachine-id&project=default');
    expect(request.body).toBe('abc\n');
    expect(request.headers).toMatchObject({
      'x-incus-uid': '0',
      'x-incus-gid': '0',
      'x-incus-mode': '0444',
      'x-incus-type': 'file',
      'x-incus-write': 'overwrite',
    });
  });

  it('names the socket when nothing listens there', async () => {
    const missing = path.join(dir, 'nothing.socket');
    const client = new IncusClient({ socketPath: missing, project: 'default' });
    const failure = await failureOf(client.ping());
    client.close();
    expect(failure).toBeInstanceOf(IncusUnreachableError);
    expect(failure.message).toContain(`Incus is unreachable at unix socket ${missing} (ENOENT)`);
  });
});
