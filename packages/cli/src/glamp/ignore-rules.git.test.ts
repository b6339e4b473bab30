import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../test/prng.js';
import { walkBundle } from './walk.js';

/** git is the reference this test compares against: without it the test fails, never skips. */
function requireGit() {
  try {
    execFileSync('git', ['--version']);
  } catch (error) {
    throw new Error(`git is missing (apt-get install git): ${(error as Error).message}`);
  }
}

const NAMES = [
  'a',
  'A',
  'b',
  'x.txt',
  'y.md',
  '.env',
  'a b',
  '#c',
  '!d',
  'foo',
  'foobar',
  'sub',
  'doc.TXT',
];
const SEGMENTS = [
  '*',
  '**',
  '?',
  '[ab]',
  '[!a]',
  '*.txt',
  'foo*',
  'a',
  'A',
  'b',
  'sub',
  'x.txt',
  '\\#c',
  '\\!d',
  'a\\ b',
  '.env',
  'foo',
  '*.md',
];

interface Case {
  files: string[];
  ignores: Record<string, string>;
}

function generate(random: () => number): Case {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
  const files = new Set<string>();
  const dirs = new Set<string>(['']);
  for (let i = 0; i < 12; i++) {
    const depth = 1 + Math.floor(random() * 3);
    const parts = Array.from({ length: depth }, () => pick(NAMES));
    const file = parts.join('/');
    // A path cannot be both a file and a directory.
    if ([...files].some((f) => f.startsWith(`${file}/`) || file.startsWith(`${f}/`))) continue;
    files.add(file);
    for (let d = 1; d < depth; d++) dirs.add(parts.slice(0, d).join('/'));
  }
  const pattern = () => {
    const n = 1 + Math.floor(random() * 2);
    let line = Array.from({ length: n }, () => pick(SEGMENTS)).join('/');
    if (random() < 0.25) line = `/${line}`;
    if (random() < 0.2) line = `${line}/`;
    if (random() < 0.25) line = `!${line}`;
    if (random() < 0.05) line = `${line} `;
    return line;
  };
  const ignores: Record<string, string> = {};
  const dirList = [...dirs].filter((d) => ![...files].includes(d));
  for (const dir of dirList) {
    if (dir !== '' && random() < 0.6) continue;
    ignores[dir] = Array.from({ length: 1 + Math.floor(random() * 4) }, pattern).join('\n');
  }
  return { files: [...files], ignores };
}

const work = mkdtempSync(path.join(tmpdir(), 'svc-ignore-git-'));
// Tens of thousands of small files: on a busy disk removing them outlasts the default hook timeout.
afterAll(() => rmSync(work, { recursive: true, force: true }), 300_000);

/**
 * Differential test: our walker against git itself on random trees and patterns (nested files,
 * negation, anchors, classes, escapes). Each batch puts 100 cases in sibling directories of one
 * repository, so one `git ls-files` answers them all.
 */
describe('.bundleignore matches git exactly', () => {
  beforeAll(requireGit);
  it('agrees with git ls-files --exclude-per-directory on 2,000 random cases', async () => {
    const CASES = 2000;
    const BATCH = 100;
    let compared = 0;
    let written = 0;
    let kept = 0;
    let nestedCases = 0;
    const mismatches: string[] = [];
    for (let batch = 0; batch < CASES / BATCH; batch++) {
      const repo = path.join(work, `batch${batch}`);
      mkdirSync(repo);
      execFileSync('git', ['init', '-q'], { cwd: repo });
      const cases: Case[] = [];
      for (let i = 0; i < BATCH; i++) {
        const seed = batch * BATCH + i + 1;
        const c = generate(prng(seed));
        cases.push(c);
        const root = path.join(repo, `case${i}`);
        for (const file of c.files) {
          mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
          writeFileSync(path.join(root, file), 'x');
        }
        for (const [dir, text] of Object.entries(c.ignores)) {
          mkdirSync(path.join(root, dir), { recursive: true });
          writeFileSync(path.join(root, dir, '.bundleignore'), text);
        }
      }
      const out = execFileSync(
        'git',
        [
          '-c',
          'core.excludesFile=/dev/null',
          '-c',
          'core.ignorecase=false',
          '-c',
          'core.quotePath=false',
          'ls-files',
          '-z',
          '--others',
          '--exclude-per-directory=.bundleignore',
        ],
        { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      const byCase = new Map<number, string[]>();
      for (const entry of out.split('\0').filter(Boolean)) {
        const [, index = '', rest = ''] = /^case(\d+)\/(.*)$/.exec(entry) ?? [];
        byCase.set(Number(index), [...(byCase.get(Number(index)) ?? []), rest]);
      }
      for (const [i, c] of cases.entries()) {
        const ours = (await walkBundle(path.join(repo, `case${i}`), [])).files
          .map((f) => f.path)
          .sort();
        const git = (byCase.get(i) ?? []).sort();
        compared += 1;
        kept += git.length;
        written += c.files.length + Object.keys(c.ignores).length;
        if (Object.keys(c.ignores).some((d) => d !== '')) nestedCases += 1;
        if (JSON.stringify(ours) !== JSON.stringify(git)) {
          mismatches.push(
            `seed ${batch * BATCH + i + 1}: ${JSON.stringify(c.ignores)} git=${JSON.stringify(git)} ours=${JSON.stringify(ours)}`,
          );
        }
      }
    }
    console.log(
      `ignore differential: ${compared} cases (${nestedCases} with nested files) against git, ${written - kept} of ${written} paths ignored, ${mismatches.length} differences`,
    );
    // The cases must exercise the rules: a good share of paths ignored, and nested files.
    expect(written - kept).toBeGreaterThan(written / 5);
    expect(nestedCases).toBeGreaterThan(CASES / 4);
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(compared).toBe(CASES);
  }, 300_000);
});
