import { createHash } from 'node:crypto';
import type { ScanFlag } from '@svc/contract';
import { ALLOWED_SECRETS, SECRET_RULES, type SecretRule, STOPWORDS } from './rules.js';

/** Files larger than this are not scanned (reported as skipped, never silently passed). */
export const MAX_SCAN_BYTES = 10 * 1024 * 1024;

/** Shannon entropy in bits per character. */
/** Reused between calls (the scanner is synchronous): no allocation per candidate. */
const COUNTS = new Uint32Array(65536);

export function entropy(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    COUNTS[code] = (COUNTS[code] as number) + 1;
  }
  let bits = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const n = COUNTS[code] as number;
    if (n === 0) continue;
    COUNTS[code] = 0;
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

export const isBinary = (bytes: Uint8Array) => bytes.subarray(0, 8000).includes(0);

/** Not reversible to the value, stable while rule, file and value stay the same. */
const fingerprint = (rule: string, file: string, secret: string) =>
  createHash('sha256').update(`${rule}\0${file}\0${secret}`).digest('hex').slice(0, 32);

/**
 * Where a text's lines start: found on first use (most texts wake no rule), then binary-searched.
 * Searching back for the previous newline at each hit instead would cost the line's length per
 * hit, quadratic on a minified file or a long data line.
 */
class LineIndex {
  #starts: number[] | undefined;

  constructor(private readonly text: string) {}

  /** The line (from 0) that holds `index`. */
  lineAt(index: number): number {
    const starts = this.#lineStarts();
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Where the line holding `index` starts. */
  lineStartOf(index: number): number {
    return this.#lineStarts()[this.lineAt(index)] as number;
  }

  #lineStarts(): number[] {
    if (!this.#starts) {
      const starts = [0];
      const { text } = this;
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
      this.#starts = starts;
    }
    return this.#starts;
  }
}

/**
 * Whether a candidate is a known non-secret (placeholder, name, low entropy). Plain loops: this
 * runs once per candidate, millions of times on a large home. The rule's own allowlist goes
 * first: it drops the generic rule's most common candidates, names such as
 * `process.env.API_KEY`, before the dearer checks.
 */
export function allowed(rule: SecretRule, secret: string): boolean {
  for (const re of rule.allow ?? []) if (re.test(secret)) return true;
  if (rule.entropy !== undefined && entropy(secret) < rule.entropy) return true;
  for (const re of ALLOWED_SECRETS) if (re.test(secret)) return true;
  const lower = secret.toLowerCase();
  for (const word of STOPWORDS) if (lower.includes(word)) return true;
  return false;
}

interface ScanState {
  readonly file: string;
  readonly lines: LineIndex;
  readonly flags: ScanFlag[];
  /** `line\0value`: one flag per line and value (a specific rule and the generic one agree). */
  readonly seen: Set<string>;
}

/** See `SecretRule.regex`. */
export function secretOf(match: RegExpExecArray): string {
  for (let g = match.length - 1; g > 0; g--) {
    const group = match[g];
    if (group !== undefined) return group;
  }
  return match[0];
}

function collect(state: ScanState, rule: SecretRule, chunk: string, offset: number) {
  rule.regex.lastIndex = 0;
  for (let match = rule.regex.exec(chunk); match; match = rule.regex.exec(chunk)) {
    const secret = secretOf(match);
    if (match[0].length === 0) rule.regex.lastIndex += 1;
    if (allowed(rule, secret)) continue;
    const line = state.lines.lineAt(offset + match.index + match[0].indexOf(secret)) + 1;
    const key = `${line}\0${secret}`;
    if (state.seen.has(key)) continue;
    state.seen.add(key);
    state.flags.push({
      file: state.file,
      line,
      rule: rule.id,
      fingerprint: fingerprint(rule.id, state.file, secret),
    });
  }
}

/** Rules run on the whole text: matches that span lines (private keys). */
const WHOLE_TEXT = new Set(['private-key']);

/**
 * Separators that ordinary words lack: a literal holding one (`ghp_`, `glpat-`) is found through
 * it, so one `indexOf` pass serves many literals instead of one pass each, and the character
 * before the separator says which literals to try.
 */
const ANCHORS = ['_', '-'];

/** A literal and the rules it wakes. */
interface Literal {
  readonly text: string;
  readonly rules: SecretRule[];
}

/**
 * How a literal without an anchor is searched: `indexOf` jumps between occurrences of the
 * pattern's first character with `memchr`, so the pattern starts at the literal's first character
 * that is not a lower-case letter (those are everywhere); and it is cut to 6 characters, because
 * V8 searches longer patterns with Boyer-Moore-Horspool, several times slower here.
 */
interface Probe {
  readonly literal: Literal;
  readonly pattern: string;
  /** Where `pattern` starts in the literal. */
  readonly offset: number;
}

function probeOf(literal: Literal): Probe {
  const offset = Math.max(0, literal.text.search(/[^a-z]/));
  return { literal, pattern: literal.text.slice(offset, offset + 6), offset };
}

/** Where the probe's literal next occurs in the text at or after `from`, or -1. */
function indexOfLiteral(text: string, { literal, pattern, offset }: Probe, from: number): number {
  for (let i = text.indexOf(pattern, from + offset); i !== -1; i = text.indexOf(pattern, i + 1))
    if (text.startsWith(literal.text, i - offset)) return i - offset;
  return -1;
}

interface CompiledRules {
  /** Found with an `indexOf` pass each. */
  readonly direct: readonly Probe[];
  /** Anchor → code of the character before it → the literals there, with the anchor's offset. */
  readonly anchored: ReadonlyMap<string, ReadonlyMap<number, readonly [Literal, number][]>>;
  /** Rules without literals (the generic one) or for whole texts, in list order. */
  readonly wholeText: readonly { readonly rule: SecretRule; readonly probes: readonly Probe[] }[];
  /** Rules whose literals don't imply a keyword: the line must hold a keyword too (gitleaks). */
  readonly gated: ReadonlySet<SecretRule>;
  /** A rule's place in the list: a specific rule claims a value before the generic one. */
  readonly order: ReadonlyMap<SecretRule, number>;
}

const compiled = new WeakMap<readonly SecretRule[], CompiledRules>();

function compile(rules: readonly SecretRule[]): CompiledRules {
  const found = compiled.get(rules);
  if (found) return found;
  const literals = new Map<string, Literal>();
  const wholeText: { rule: SecretRule; probes: Probe[] }[] = [];
  const gated = new Set<SecretRule>();
  for (const rule of rules) {
    if (!rule.literals?.length || WHOLE_TEXT.has(rule.id)) {
      const probes = (rule.literals ?? []).map((text) => probeOf({ text, rules: [rule] }));
      wholeText.push({ rule, probes });
      continue;
    }
    const implied = (literal: string) =>
      rule.keywords.some((k) => literal.toLowerCase().includes(k));
    if (!rule.literals.every(implied)) gated.add(rule);
    for (const text of rule.literals) {
      const literal = literals.get(text) ?? { text, rules: [] };
      literal.rules.push(rule);
      literals.set(text, literal);
    }
  }
  const direct: Probe[] = [];
  const anchored = new Map<string, Map<number, [Literal, number][]>>();
  for (const literal of literals.values()) {
    const offset = [...literal.text].findIndex((c, i) => i > 0 && ANCHORS.includes(c));
    if (offset === -1) {
      direct.push(probeOf(literal));
      continue;
    }
    const anchor = literal.text[offset] as string;
    const before = literal.text.charCodeAt(offset - 1);
    const byBefore = anchored.get(anchor) ?? new Map<number, [Literal, number][]>();
    byBefore.set(before, [...(byBefore.get(before) ?? []), [literal, offset]]);
    anchored.set(anchor, byBefore);
  }
  const order = new Map(rules.map((rule, i) => [rule, i]));
  const result = { direct, anchored, wholeText, gated, order };
  compiled.set(rules, result);
  return result;
}

/** Line start → rules to run on that line. */
type Work = Map<number, Set<SecretRule>>;

function wake(work: Work, lines: LineIndex, index: number, literal: Literal) {
  const lineStart = lines.lineStartOf(index);
  const rules = work.get(lineStart) ?? new Set();
  for (const rule of literal.rules) rules.add(rule);
  work.set(lineStart, rules);
}

/** Finds every literal in the text (gitleaks' keyword prefilter, on exact strings). */
function findLiterals({ direct, anchored }: CompiledRules, text: string, lines: LineIndex): Work {
  const work: Work = new Map();
  for (const probe of direct) {
    for (let i = indexOfLiteral(text, probe, 0); i !== -1; i = indexOfLiteral(text, probe, i + 1))
      wake(work, lines, i, probe.literal);
  }
  for (const [anchor, byBefore] of anchored) {
    for (let i = text.indexOf(anchor, 1); i !== -1; i = text.indexOf(anchor, i + 1)) {
      const candidates = byBefore.get(text.charCodeAt(i - 1));
      if (!candidates) continue;
      for (const [literal, offset] of candidates)
        if (text.startsWith(literal.text, i - offset)) wake(work, lines, i - offset, literal);
    }
  }
  return work;
}

const holdsKeyword = (rule: SecretRule, chunk: string) => {
  const lower = chunk.toLowerCase();
  return rule.keywords.some((k) => lower.includes(k));
};

/**
 * Finds secret-looking values in one text file. `indexOf` passes for the rules' literals pick the
 * lines worth a look and the rules to run on each (gitleaks' keyword prefilter, without a
 * lower-cased copy of the text); the rules' regexes then run on those lines only. A flag names
 * the file, line and rule, never the value: reports are printed and sent to the service.
 */
export function scanText(file: string, text: string, rules = SECRET_RULES): ScanFlag[] {
  const compiledRules = compile(rules);
  const { wholeText, gated, order } = compiledRules;
  const lines = new LineIndex(text);
  const work = findLiterals(compiledRules, text, lines);
  const state: ScanState = { file, lines, flags: [], seen: new Set() };
  for (const [lineStart, set] of [...work].sort((a, b) => a[0] - b[0])) {
    const lineEnd = text.indexOf('\n', lineStart);
    const chunk = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
    const ordered =
      set.size === 1 ? set : [...set].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    for (const rule of ordered)
      if (!gated.has(rule) || holdsKeyword(rule, chunk)) collect(state, rule, chunk, lineStart);
  }
  // After the rules for known formats, so they name a value before the generic rule can.
  for (const { rule, probes } of wholeText) {
    if (probes.length === 0 || probes.some((probe) => indexOfLiteral(text, probe, 0) !== -1))
      collect(state, rule, text, 0);
  }
  return state.flags.sort((a, b) => a.line - b.line || a.rule.localeCompare(b.rule));
}

/** Scans a file's bytes: binaries and files over `MAX_SCAN_BYTES` are skipped. */
export function scanBytes(file: string, bytes: Uint8Array): ScanFlag[] | 'skipped' {
  if (bytes.length > MAX_SCAN_BYTES || isBinary(bytes)) return 'skipped';
  // A view, not a copy: a thread's bytes arrive as a plain Uint8Array.
  return scanText(file, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
}
