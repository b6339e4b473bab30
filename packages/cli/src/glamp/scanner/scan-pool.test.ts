import { describe, expect, it } from 'vitest';
import { scanBytes } from './scan.js';
import { ScanPool } from './scan-pool.js';

describe('scanner thread pool', () => {
  it('finds exactly what one thread finds, file by file', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({
      file: `f${i}.txt`,
      bytes: Buffer.from(
        i % 3 === 0
          ? `line\nGH_TOKEN=ghp_${'Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2'.slice(0, 36)}\n`
          : `nothing to see ${i}\n`,
      ),
    }));
    files.push({ file: 'bin.dat', bytes: Buffer.from([1, 0, 2]) });
    const pool = new ScanPool(2);
    try {
      const pending: Promise<unknown>[] = [];
      for (const f of files) {
        await pool.ready();
        pending.push(pool.scan(f.file, f.bytes));
      }
      const pooled = await Promise.all(pending);
      expect(pooled).toEqual(files.map((f) => scanBytes(f.file, f.bytes)));
      expect(pooled.filter((r) => Array.isArray(r) && r.length > 0)).toHaveLength(14);
      expect(pooled.at(-1)).toBe('skipped');
    } finally {
      await pool.close();
    }
  });

  it('scans in this thread when it has no threads', async () => {
    const pool = new ScanPool(0);
    expect(await pool.scan('a', Buffer.from('x'))).toEqual([]);
    await pool.close();
  });
});
