import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { IGNORE_FILE } from '@svc/contract';
import { BundleIgnore } from './ignore-rules.js';

export interface WalkedFile {
  /** Root-relative, `/`-separated. */
  readonly path: string;
  /** Where the bytes are read from (a symlink's target inside the root). */
  readonly source: string;
  readonly size: number;
  readonly executable: boolean;
}

export interface WalkResult {
  readonly files: WalkedFile[];
  /** Symlinks left out: pointing outside the root, at a directory, or nowhere. */
  readonly skippedLinks: string[];
  /** Ignore lines git may read differently (`**` glued to other characters). */
  readonly ignoreWarnings: string[];
}

/** Byte order of the UTF-8 paths: the same on every machine and locale. */
export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Lists the files of `root` a bundle ships: `.bundleignore` files apply with git's semantics
 * (nested ones included), excluded directories are pruned (never read), `fixedRules` always
 * apply. Symlinks are never followed out of the root: one pointing at a regular file inside the
 * root ships that file's bytes under the link's path; any other link is skipped.
 */
export async function walkBundle(
  root: string,
  fixedRules: readonly string[],
  options: { readIgnoreFiles?: boolean } = {},
): Promise<WalkResult> {
  const readIgnoreFiles = options.readIgnoreFiles ?? true;
  const rules = new BundleIgnore(fixedRules);
  const realRoot = await realpath(root);
  const files: WalkedFile[] = [];
  const skippedLinks: string[] = [];
  const ignoreWarnings: string[] = [];

  async function visit(dir: string) {
    const abs = path.join(root, dir);
    const entries = await readdir(abs, { withFileTypes: true });
    if (readIgnoreFiles && entries.some((e) => e.name === IGNORE_FILE && e.isFile())) {
      ignoreWarnings.push(
        ...rules.addFile(dir, await readFile(path.join(abs, IGNORE_FILE), 'utf8')),
      );
    }
    entries.sort((a, b) => byteOrder(a.name, b.name));
    for (const entry of entries) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      const full = path.join(abs, entry.name);
      if (entry.isDirectory()) {
        if (!rules.ignores(rel, true)) await visit(rel);
      } else if (entry.isFile()) {
        if (rules.ignores(rel, false)) continue;
        const info = await lstat(full);
        files.push({
          path: rel,
          source: full,
          size: info.size,
          executable: (info.mode & 0o111) !== 0,
        });
      } else if (entry.isSymbolicLink()) {
        if (rules.ignores(rel, false)) continue;
        const target = await realpath(full).catch(() => undefined);
        const inside =
          target && (target + path.sep).startsWith(realRoot + path.sep) && target !== realRoot;
        const targetRel = inside ? path.relative(realRoot, target).split(path.sep).join('/') : '';
        // A link must not smuggle out what the rules exclude (a key under `.ssh/`, say).
        const info = inside && !rules.ignores(targetRel, false) ? await stat(target) : undefined;
        if (!target || !info?.isFile()) {
          skippedLinks.push(rel);
          continue;
        }
        files.push({
          path: rel,
          source: target,
          size: info.size,
          executable: (info.mode & 0o111) !== 0,
        });
      }
      // Sockets, FIFOs and devices are never part of a bundle.
    }
  }

  await visit('');
  files.sort((a, b) => byteOrder(a.path, b.path));
  return { files, skippedLinks, ignoreWarnings };
}
