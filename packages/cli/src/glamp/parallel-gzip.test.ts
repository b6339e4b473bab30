import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../test/prng.js';
import { crc32Combine } from './crc32-combine.js';
import { GZIP_BLOCK_BYTES, ParallelGzip } from './parallel-gzip.js';
import { writeTarball } from './tarball.js';

/** Text-like bytes (compressible, with repeats across block boundaries) and random bytes. */
function sample(length: number, seed: number): Buffer {
  const random = prng(seed);
  const words = ['alpha', 'beta', 'gamma', 'delta', ' ', '\n', '{', '}', 'return', '0x'];
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; ) {
    if (random() < 0.1) {
      out[i++] = Math.floor(random() * 256);
      continue;
    }
    const word = words[Math.floor(random() * words.length)] as string;
    i += out.write(word, i);
  }
  return out;
}

/** Compresses `data` fed in chunks of `chunkBytes`. */
async function gzip(
  data: Buffer,
  options: { blockBytes?: number; threads?: number; chunkBytes?: number } = {},
) {
  const { chunkBytes = 64 * 1024, ...gzipOptions } = options;
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += chunkBytes)
    chunks.push(data.subarray(at, at + chunkBytes));
  const out: Buffer[] = [];
  await pipeline(Readable.from(chunks), new ParallelGzip(gzipOptions), async (source) => {
    for await (const chunk of source) out.push(chunk as Buffer);
  });
  return Buffer.concat(out);
}

describe('parallel gzip', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-pgzip-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** gunzip -t and the decompressed bytes, through the system's gzip. */
  async function systemGunzip(gz: Buffer): Promise<Buffer> {
    const file = path.join(dir, 'data.gz');
    await writeFile(file, gz);
    execFileSync('gzip', ['-t', file]);
    return execFileSync('gzip', ['-dc', file], { maxBuffer: 64 * 1024 * 1024 });
  }

  const sizes: [string, number][] = [
    ['empty', 0],
    ['one byte', 1],
    ['less than a block', 1000],
    ['exactly one block', GZIP_BLOCK_BYTES],
    ['one block and a byte', GZIP_BLOCK_BYTES + 1],
    ['exactly three blocks', 3 * GZIP_BLOCK_BYTES],
    ['many blocks', 20 * GZIP_BLOCK_BYTES + 12345],
  ];
  for (const [name, size] of sizes) {
    it(`round-trips ${name} (${size} bytes) through the system's gzip`, async () => {
      const data = sample(size, size + 1);
      const gz = await gzip(data);
      expect((await systemGunzip(gz)).equals(data)).toBe(true);
      expect(zlib.gunzipSync(gz).equals(data)).toBe(true);
    });
  }

  it('gives the same bytes whatever the chunking and the number of threads', async () => {
    const data = sample(12 * GZIP_BLOCK_BYTES + 777, 3);
    const reference = await gzip(data, { threads: 1, chunkBytes: 1 << 20 });
    for (const options of [
      { threads: 2, chunkBytes: 4096 },
      { threads: 4, chunkBytes: 100_003 },
      { threads: 3, chunkBytes: GZIP_BLOCK_BYTES },
    ]) {
      expect((await gzip(data, options)).equals(reference)).toBe(true);
    }
    // Another input, other bytes: the comparison can fail.
    data[5] = (data[5] as number) ^ 1;
    expect((await gzip(data)).equals(reference)).toBe(false);
  });

  it('compresses about as well as one gzip stream (each block keeps its 32 KiB of history)', async () => {
    const data = sample(16 * GZIP_BLOCK_BYTES, 9);
    const ours = await gzip(data);
    const single = zlib.gzipSync(data, { level: 6 });
    expect(ours.length).toBeLessThan(single.length * 1.01);
  });

  it('handles blocks shorter than the dictionary', async () => {
    const data = sample(100_000, 4);
    const gz = await gzip(data, { blockBytes: 1000, chunkBytes: 333 });
    expect((await systemGunzip(gz)).equals(data)).toBe(true);
  });

  it('combines CRC-32s as zlib computes them over the concatenation', () => {
    for (const [a, b] of [
      [0, 0],
      [1, 1],
      [5, 0],
      [0, 7],
      [100, GZIP_BLOCK_BYTES],
      [65_536, 12_345],
      [7, 1_000_003],
    ] as const) {
      const left = sample(a, a + 7);
      const right = sample(b, b + 11);
      expect(crc32Combine(zlib.crc32(left), zlib.crc32(right), b)).toBe(
        zlib.crc32(Buffer.concat([left, right])),
      );
    }
  });

  it('builds tarballs that tar lists, byte-identical for identical trees', async () => {
    const files: Record<string, Buffer> = {
      'empty.txt': Buffer.alloc(0),
      'one-block.bin': sample(GZIP_BLOCK_BYTES, 1),
      'many/blocks.txt': sample(5 * GZIP_BLOCK_BYTES + 3, 2),
      'small.md': Buffer.from('# hi\n'),
    };
    const paths = Object.keys(files).sort();
    const tarballs: Buffer[] = [];
    for (const copy of ['a', 'b']) {
      for (const [file, bytes] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, copy, file)), { recursive: true });
        await writeFile(path.join(dir, copy, file), bytes);
      }
      const target = path.join(dir, `${copy}.tgz`);
      await writeTarball(path.join(dir, copy), paths, target);
      execFileSync('gzip', ['-t', target]);
      const listed = execFileSync('tar', ['tzf', target], { encoding: 'utf8' });
      expect(listed.split('\n').filter(Boolean)).toEqual(paths);
      tarballs.push(execFileSync('cat', [target], { maxBuffer: 64 * 1024 * 1024 }));
    }
    expect((tarballs[0] as Buffer).equals(tarballs[1] as Buffer)).toBe(true);
  });
});
