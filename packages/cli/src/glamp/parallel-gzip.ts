import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { crc32Combine } from './crc32-combine.js';

/** Input bytes per block. Boundaries fall at fixed offsets, so the output never depends on timing. */
export const GZIP_BLOCK_BYTES = 256 * 1024;
/** Deflate's window: each block is compressed with the 32 KiB before it as its dictionary. */
const DICTIONARY_BYTES = 32 * 1024;
/** Blocks handed to the threads and not yet written out, per thread (bounds memory). */
const BLOCKS_IN_FLIGHT_PER_THREAD = 4;
/** Magic, deflate, no flags, no mtime, no extra flags, Unix: what Node's own gzip writes. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);

interface BlockJob {
  readonly id: number;
  readonly data: Uint8Array;
  readonly dictionary: Uint8Array | undefined;
  readonly isLast: boolean;
  readonly level: number;
}

interface BlockResult {
  readonly id: number;
  readonly deflated: Uint8Array;
  readonly crc: number;
  readonly length: number;
}

/**
 * A thread: a raw deflate of each block it is given, primed with the 32 KiB before it and ended
 * with a sync flush (byte-aligned, not final) unless it is the last block, so the blocks' outputs
 * concatenate into one deflate stream; and the block's CRC-32. Inline source (run as CommonJS):
 * no file to find beside the built `svc`, and nothing a bundler renames.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const zlib = require('node:zlib');
parentPort.on('message', ({ id, data, dictionary, isLast, level }) => {
  const deflated = zlib.deflateRawSync(data, {
    level,
    ...(dictionary ? { dictionary } : {}),
    finishFlush: isLast ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
  });
  const result = { id, deflated, crc: zlib.crc32(data), length: data.length };
  parentPort.postMessage(result, deflated.byteLength === deflated.buffer.byteLength ? [deflated.buffer] : []);
});
`;

/**
 * gzip on every core, pigz's way: the input is cut into `GZIP_BLOCK_BYTES` blocks, each
 * compressed on a worker thread with the previous block's last 32 KiB as its dictionary, and
 * the outputs written in order between one gzip header and one trailer (CRC-32 combined from
 * the blocks'). The result is one standard gzip stream (`gunzip`, `tar tzf`), and the same input
 * gives the same bytes at the same level whatever the threads' timing. Threads start with the
 * first blocks, one per block up to `threads`.
 */
export class ParallelGzip extends Transform {
  readonly #level: number;
  readonly #blockBytes: number;
  readonly #threads: number;
  readonly #workers: Worker[] = [];
  readonly #finished = new Map<number, BlockResult>();
  #buffered: Buffer[] = [];
  #bufferedBytes = 0;
  #dictionary: Uint8Array | undefined;
  #nextId = 0;
  #nextOut = 0;
  #crc = 0;
  #length = 0;
  /** A write or the end waiting for blocks to come back. */
  #resume: (() => void) | undefined;
  #failure: Error | undefined;

  constructor(options: { level?: number; blockBytes?: number; threads?: number } = {}) {
    super();
    this.#level = options.level ?? 6;
    this.#blockBytes = options.blockBytes ?? GZIP_BLOCK_BYTES;
    this.#threads = options.threads ?? Math.min(8, availableParallelism());
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#buffered.push(chunk);
    this.#bufferedBytes += chunk.length;
    // Strictly more than a block: whatever remains at the end is the last block, even when the
    // input is a whole number of blocks (or empty).
    while (this.#bufferedBytes > this.#blockBytes)
      this.#dispatch(this.#take(this.#blockBytes), false);
    this.#whenBelow(this.#threads * BLOCKS_IN_FLIGHT_PER_THREAD, done);
  }

  override _flush(done: TransformCallback): void {
    this.#dispatch(this.#take(this.#bufferedBytes), true);
    this.#whenBelow(1, () => {
      if (this.#failure) return done(this.#failure);
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(this.#crc, 0);
      trailer.writeUInt32LE(this.#length % 2 ** 32, 4);
      this.push(trailer);
      this.#stopThreads();
      done();
    });
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#stopThreads();
    done(error);
  }

  /** The next `bytes` of input, copied into a buffer of its own (it is moved to a thread). */
  #take(bytes: number): Uint8Array {
    const block = new Uint8Array(bytes);
    let at = 0;
    while (at < bytes) {
      const head = this.#buffered[0] as Buffer;
      const n = Math.min(head.length, bytes - at);
      block.set(head.subarray(0, n), at);
      at += n;
      if (n === head.length) this.#buffered.shift();
      else this.#buffered[0] = head.subarray(n);
    }
    this.#bufferedBytes -= bytes;
    return block;
  }

  #dispatch(data: Uint8Array, isLast: boolean): void {
    const job: BlockJob = {
      id: this.#nextId++,
      data,
      dictionary: this.#dictionary,
      isLast,
      level: this.#level,
    };
    // Deflate looks back at most 32 KiB, and only within what it was given: a short block
    // passes on its own bytes and the tail of the dictionary it had.
    const window =
      data.length >= DICTIONARY_BYTES
        ? data.slice(data.length - DICTIONARY_BYTES)
        : concatTail(this.#dictionary, data, DICTIONARY_BYTES);
    this.#dictionary = window;
    // One more thread per block until there are enough: a one-block stream starts one.
    if (this.#workers.length < this.#threads) this.#startThread();
    const worker = this.#workers[job.id % this.#workers.length] as Worker;
    worker.postMessage(job, [data.buffer as ArrayBuffer]);
  }

  #startThread(): void {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', (result: BlockResult) => this.#receive(result));
    worker.on('error', (error) => this.#fail(error));
    this.#workers.push(worker);
  }

  #stopThreads(): void {
    for (const worker of this.#workers.splice(0)) void worker.terminate();
  }

  /** Writes out, in order, every block that is back. */
  #receive(result: BlockResult): void {
    this.#finished.set(result.id, result);
    for (let r = this.#finished.get(this.#nextOut); r; r = this.#finished.get(this.#nextOut)) {
      this.#finished.delete(this.#nextOut);
      if (this.#nextOut === 0) this.push(GZIP_HEADER);
      this.push(Buffer.from(r.deflated.buffer, r.deflated.byteOffset, r.deflated.byteLength));
      this.#crc = crc32Combine(this.#crc, r.crc, r.length);
      this.#length += r.length;
      this.#nextOut += 1;
    }
    this.#wake();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#stopThreads();
    this.destroy(error);
  }

  #whenBelow(blocksInFlight: number, then: () => void): void {
    const check = () => {
      if (this.#failure) return;
      if (this.#nextId - this.#nextOut < blocksInFlight) {
        this.#resume = undefined;
        then();
      } else this.#resume = check;
    };
    check();
  }

  #wake(): void {
    this.#resume?.();
  }
}

function concatTail(before: Uint8Array | undefined, data: Uint8Array, max: number): Uint8Array {
  const keep = Math.min(before?.length ?? 0, max - data.length);
  const window = new Uint8Array(keep + data.length);
  if (before && keep > 0) window.set(before.subarray(before.length - keep), 0);
  window.set(data, keep);
  return window;
}
