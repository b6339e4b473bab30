import ignore, { type Ignore } from 'ignore';

/** Characters that are special in a gitignore pattern, escaped when a directory name is a prefix. */
const GLOB_SPECIAL = /[*?[\]\\]/g;

function escapeDir(dir: string): string {
  const escaped = dir.replace(GLOB_SPECIAL, (ch) => `\\${ch}`);
  // A prefix starting with `#` or `!` would read as a comment or a negation.
  return /^[#!]/.test(escaped) ? `\\${escaped}` : escaped;
}

/**
 * Rewrites the lines of a nested `.bundleignore` (in `dir`, relative to the staging root) into
 * root-relative lines with git's meaning. A pattern with a `/` before its end is anchored to its
 * file's directory; one without matches at any depth below it. Added after its ancestors' lines,
 * "last match wins" in one list then equals git's "the deepest file with a match wins" (measured
 * in bundle-notes.md; a stack of per-directory matchers is not equivalent).
 */
export function flattenIgnoreLines(dir: string, text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (dir === '') return lines;
  const prefix = escapeDir(dir);
  const out: string[] = [];
  for (const raw of lines) {
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const negated = raw.startsWith('!');
    const body = negated ? raw.slice(1) : raw;
    // Trailing spaces are trimmed by the matcher unless escaped; ignore them for the anchor test.
    const core = body.replace(/(?<!\\) +$/, '').replace(/\/$/, '');
    const anchored = core.includes('/');
    const rest = anchored ? body.replace(/^\//, '') : `**/${body}`;
    out.push(`${negated ? '!' : ''}${prefix}/${rest}`);
  }
  return out;
}

/**
 * The staging root's ignore rules: every `.bundleignore` found on the way down, flattened, plus a
 * fixed list checked first that no `!` can override. Paths are root-relative, `/`-separated;
 * directories are asked about with a trailing `/` (the matcher cannot stat).
 */
export class BundleIgnore {
  readonly #user: Ignore = ignore({ ignorecase: false });
  readonly #fixed: Ignore;

  constructor(fixedLines: readonly string[]) {
    this.#fixed = ignore({ ignorecase: false }).add([...fixedLines]);
  }

  /**
   * Adds the `.bundleignore` of directory `dir` ('' for the root). Returns the lines whose `**`
   * touches other characters in its segment (`foo**`, `a**b`): the one pattern shape where the
   * matcher and git are known to disagree (bundle-notes.md), so `stage` warns about them.
   */
  addFile(dir: string, text: string): string[] {
    this.#user.add(flattenIgnoreLines(dir, text));
    const file = dir ? `${dir}/.bundleignore` : '.bundleignore';
    return text
      .split(/\r?\n/)
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => !line.startsWith('#') && /[^/]\*\*|\*\*[^/\s]/.test(line.trim()))
      .map(({ line, index }) => `${file}:${index + 1}: "${line.trim()}"`);
  }

  ignores(path: string, isDirectory: boolean): boolean {
    const key = isDirectory ? `${path}/` : path;
    return this.#fixed.ignores(key) || this.#user.ignores(key);
  }
}
