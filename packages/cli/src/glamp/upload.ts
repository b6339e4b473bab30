import { createReadStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Upload } from '@svc/contract';
import type { StepProgress } from './staging.js';

/** Uploads in flight at once: enough to hide each request's round trip, few enough for a VM. */
export const UPLOAD_CONCURRENCY = 4;

/**
 * Runs `work` on every item, at most `limit` at a time, in the items' order. After a failure no
 * further item starts; the ones in flight finish first, then the first failure is thrown, so
 * nothing is left running once this returns.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}

/**
 * PUTs one file to an upload URL, streaming it, with the exact length and signed headers.
 * `onBytes` counts the bytes as they are handed to the connection (the stream's backpressure
 * keeps that within a chunk or two of what was sent).
 */
export async function putFile(
  upload: Upload,
  file: string,
  onBytes: (n: number) => void,
): Promise<void> {
  const url = new URL(upload.url);
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'PUT',
    headers: { ...upload.headers, 'content-length': String(upload.size) },
  });
  const answered = new Promise<void>((resolve, reject) => {
    request.on('response', (res) => {
      res.resume();
      res.on('error', reject);
      res.on('end', () =>
        res.statusCode && res.statusCode < 300
          ? resolve()
          : reject(new Error(`upload refused with status ${res.statusCode}`)),
      );
    });
    request.on('error', reject);
  });
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  // Both settle before this returns: a refused upload may answer before the body is sent.
  const [sent, answer] = await Promise.allSettled([
    pipeline(createReadStream(file), counter, request),
    answered,
  ]);
  if (answer.status === 'rejected') throw answer.reason;
  if (sent.status === 'rejected') throw sent.reason;
}

/**
 * Uploads every object from its local file, `UPLOAD_CONCURRENCY` at a time, reporting each
 * file and its bytes as they go.
 */
export async function uploadAll(
  uploads: readonly Upload[],
  sourceOf: (upload: Upload) => string,
  progress: StepProgress,
  concurrency = UPLOAD_CONCURRENCY,
): Promise<void> {
  progress.begin(
    uploads.length,
    uploads.reduce((sum, u) => sum + u.size, 0),
  );
  // Largest first: a big tarball started last would leave the other connections idle.
  const bySize = [...uploads].sort((a, b) => b.size - a.size);
  await forEachLimited(bySize, concurrency, async (upload) => {
    await putFile(upload, sourceOf(upload), (n) => progress.advance(0, n));
    progress.advance(1, 0);
  });
}
