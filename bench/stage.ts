import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { isBinary, scanText } from '../packages/cli/src/glamp/scanner/scan.js';
import { ScanPool } from '../packages/cli/src/glamp/scanner/scan-pool.js';
import { buildStagingTree, finishStagingTarball } from '../packages/cli/src/glamp/staging.js';
import type { TarballWriter } from '../packages/cli/src/glamp/tarball.js';
import { prng } from '../packages/cli/test/prng.js';
import { publishTwice } from './stage-publish.js';

const LINES = [
  'const apiKey = process.env.API_KEY;',
  'export function handler(request, response) {',
  '  return response.json({ ok: true, token: request.headers.authorization });',
  '# Configuration: set the access token in the environment before starting.',
  'import { createServer } from "node:http";',
  '  "integrity": "sha512-',
  'password_hint = "see the team vault"',
  '    at Object.<anonymous> (/home/agent/projects/app/index.js:12:7)',
  'The quick brown fox jumps over the lazy dog; keys and secrets stay out of logs.',
];

/** A home of `files` files totalling about `bytes`: code-like text, a tenth incompressible. */
async function generateHome(root: string, files: number, bytes: number) {
  const random = prng(7); // seeded: every run builds the same home
  const word = () => Math.floor(random() * 0xffffffff).toString(36);
  const pool = Array.from({ length: 64 }, () => {
    const lines: string[] = [];
    for (let n = 0; n < 64 * 1024; ) {
      const line =
        random() < 0.5
          ? (LINES[Math.floor(random() * LINES.length)] as string)
          : `${word()} ${word()} ${word()} = ${word()}${word()};`;
      lines.push(line);
      n += line.length + 1;
    }
    return Buffer.from(lines.join('\n'));
  });
  const average = bytes / files;
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `projects/p${i % 50}/src/d${i % 400}`);
    await mkdir(dir, { recursive: true });
    const size = Math.max(1, Math.floor(average * (0.5 + random())));
    let content: Buffer;
    if (i % 10 === 0) {
      content = Buffer.alloc(size);
      for (let j = 0; j < size; j += 4)
        content.writeUInt32LE(Math.floor(random() * 0xffffffff), Math.min(j, size - 4));
      content[0] = 0;
    } else {
      const parts: Buffer[] = [Buffer.from(`// file ${i}\n`)];
      for (let n = 0; n < size; ) {
        const chunk = pool[Math.floor(random() * pool.length)] as Buffer;
        const piece = chunk.subarray(0, Math.min(chunk.length, size - n));
        parts.push(piece);
        n += piece.length;
      }
      if (i % 97 === 1)
        parts.push(
          Buffer.from(
            `\nGH_TOKEN=ghp_${word()}${word()}${word()}${word()}${word()}abcdef`.slice(0, 50),
          ),
        );
      content = Buffer.concat(parts);
    }
    await writeFile(path.join(dir, `f${i}.${['js', 'ts', 'md', 'json', 'bin'][i % 5]}`), content);
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const time = async <T>(fn: () => Promise<T>) => {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
};

/**
 * `--mb`/`--files` (or `BENCH_STAGE_MB`/`BENCH_STAGE_FILES`, for a quicker run) size the staged
 * home, 1 GB / 20,000 files by default; `--publish-mb` the published one (120 MB).
 */
export async function run(args: string[]): Promise<void> {
  const flag = (name: string, env: string | undefined, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : env ? Number(env) : fallback;
  };
  const megabytes = flag('mb', process.env.BENCH_STAGE_MB, 1000);
  const fileCount = flag('files', process.env.BENCH_STAGE_FILES, 20_000);
  const publishMb = flag('publish-mb', undefined, 120);
  // The same average file size as the staged home's default.
  await publishTwice(generateHome, { megabytes: publishMb, files: Math.round(publishMb * 20) });
  const home = await mkdtemp(path.join(tmpdir(), 'svc-bench-home-'));
  try {
    console.log(`generating a home of ${fileCount} files, about ${megabytes} MB…`);
    await generateHome(home, fileCount, megabytes * 1e6);
    const baselineTarget = path.join(tmpdir(), `svc-bench-${process.pid}.tgz`);
    const tarCzf = await time(async () =>
      execFileSync('tar', ['czf', baselineTarget, '-C', home, '.']),
    );
    await rm(baselineTarget, { force: true });
    let treeMs = 0;
    const stage = await time(async () => {
      // As `svc glamp stage` does: the tree is hashed and scanned while it is copied, and each
      // file is packed as soon as it is staged.
      const tree = await time(() => buildStagingTree(home, undefined, { tarball: true }));
      treeMs = tree.ms;
      const tarball = await finishStagingTarball(
        tree.result.tarball as TarballWriter,
        tree.result.files,
      );
      return { described: tree.result, tarball };
    });
    const { described, tarball } = stage.result;
    console.log(
      `stage (walk, copy, hash, scan, tarball): ${seconds(stage.ms)}; tar czf: ${seconds(tarCzf.ms)}; ratio ${(stage.ms / tarCzf.ms).toFixed(2)}× (target ≤ 1.0×)`,
    );
    console.log(
      `  walk, copy, hash and scan (packing meanwhile) ${seconds(treeMs)}; the rest of the tarball ${seconds(stage.ms - treeMs)}`,
    );
    const byRule = new Map<string, number>();
    for (const f of described.flags) byRule.set(f.rule, (byRule.get(f.rule) ?? 0) + 1);
    console.log(
      `  ${described.files.length} files, tarball ${(tarball.size / 1e6).toFixed(1)} MB, flags ${JSON.stringify(Object.fromEntries(byRule))}`,
    );

    // Scanner throughput on the same text files, read beforehand, against secretlint.
    const stagingDir = path.join(home, '.crabglamp/glamp-staging');
    const texts: { file: string; text: string }[] = [];
    for (const f of described.files) {
      const bytes = await readFile(path.join(stagingDir, f.path));
      if (!isBinary(bytes)) texts.push({ file: f.path, text: bytes.toString('utf8') });
    }
    const totalMb = texts.reduce((sum, t) => sum + Buffer.byteLength(t.text), 0) / 1e6;
    const ours = await time(async () => {
      let flags = 0;
      for (const t of texts) flags += scanText(t.file, t.text).length;
      return flags;
    });
    const pool = new ScanPool();
    const pooled = await time(async () => {
      const pending: Promise<unknown>[] = [];
      for (const t of texts) {
        await pool.ready();
        pending.push(pool.scan(t.file, Buffer.from(t.text)));
      }
      return (await Promise.all(pending)).length;
    });
    await pool.close();
    const config = {
      rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }],
    };
    const theirs = await time(async () => {
      let messages = 0;
      for (const t of texts) {
        const result = await lintSource({
          source: { filePath: t.file, content: t.text, contentType: 'text' },
          options: { config, maskSecrets: true, noPhysicFilePath: true },
        });
        messages += result.messages.length;
      }
      return messages;
    });
    const oursRate = totalMb / (ours.ms / 1000);
    const pooledRate = totalMb / (pooled.ms / 1000);
    const theirsRate = totalMb / (theirs.ms / 1000);
    console.log(
      `scanner: ${oursRate.toFixed(1)} MB/s on one thread (${ours.result} flags), ${pooledRate.toFixed(1)} MB/s on the stage's thread pool; secretlint: ${theirsRate.toFixed(1)} MB/s (${theirs.result} findings) on ${totalMb.toFixed(1)} MB of text`,
    );
    console.log(
      `  ratio ${(oursRate / theirsRate).toFixed(2)}× on one thread, ${(pooledRate / theirsRate).toFixed(2)}× with the pool (target ≥ 3×)`,
    );
    longLines(texts);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * The same text as one line (a minified file, a data line) and in lines of 120 characters: the
 * scanner's time must not grow with the length of a line.
 */
function longLines(texts: readonly { text: string }[]) {
  let sample = '';
  for (const { text } of texts) {
    if (sample.length >= 8_000_000) break;
    sample += `${text} `;
  }
  sample = sample.slice(0, 8_000_000);
  const split = sample.replace(/(.{120})/gs, '$1\n');
  const oneLine = sample.replace(/\n/g, ' ');
  const scan = (t: string) => {
    const started = performance.now();
    scanText('long.js', t);
    return performance.now() - started;
  };
  const lined = scan(split);
  const single = scan(oneLine);
  console.log(
    `long lines: ${(sample.length / 1e6).toFixed(1)} MB as one line ${single.toFixed(0)} ms, in 120-character lines ${lined.toFixed(0)} ms; ratio ${(single / lined).toFixed(2)}× (target ≤ 2×)`,
  );
}
