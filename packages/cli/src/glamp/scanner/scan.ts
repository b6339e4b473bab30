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

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: readonly number[], index: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

// Plain loops below: this runs once per candidate, millions of times on a large home.
function allowed(rule: SecretRule, secret: string): boolean {
  if (rule.entropy !== undefined && entropy(secret) < rule.entropy) return true;
  for (const re of ALLOWED_SECRETS) if (re.test(secret)) return true;
  for (const re of rule.allow ?? []) if (re.test(secret)) return true;
  const lower = secret.toLowerCase();
  for (const word of STOPWORDS) if (lower.includes(word)) return true;
  return false;
}

interface ScanState {
  readonly file: string;
  readonly starts: readonly number[];
  readonly flags: ScanFlag[];
  /** `line\0value`: one flag per line and value (a specific rule and the generic one agree). */
  readonly seen: Set<string>;
}

function collect(state: ScanState, rule: SecretRule, chunk: string, offset: number) {
  rule.regex.lastIndex = 0;
  for (let match = rule.regex.exec(chunk); match; match = rule.regex.exec(chunk)) {
    let secret = match[0];
    let within = 0;
    for (let g = 1; g < match.length; g++) {
      const group = match[g];
      if (group !== undefined) {
        secret = group;
        within = match[0].indexOf(group);
        break;
      }
    }
    if (match[0].length === 0) rule.regex.lastIndex += 1;
    if (allowed(rule, secret)) continue;
    const line = lineOf(state.starts, offset + match.index + within);
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

/**
 * Rules run on the whole text instead of on the lines their keywords pick: matches that span
 * lines (private keys), and the generic rule, whose keywords (`key`, `token`, `api`…) are so
 * common in code that one pass of its own regex is cheaper than the bookkeeping per keyword.
 */
const WHOLE_TEXT = new Set(['private-key', 'generic-api-key', 'twilio-api-key']);

interface CompiledRules {
  readonly keywords: RegExp;
  readonly byKeyword: ReadonlyMap<string, readonly SecretRule[]>;
  readonly wholeText: readonly SecretRule[];
}

const compiled = new WeakMap<readonly SecretRule[], CompiledRules>();

/** One regex for every keyword (longest first), and which rules each keyword wakes. */
function compile(rules: readonly SecretRule[]): CompiledRules {
  let found = compiled.get(rules);
  if (!found) {
    const byKeyword = new Map<string, SecretRule[]>();
    for (const rule of rules) {
      if (WHOLE_TEXT.has(rule.id)) continue;
      for (const k of rule.keywords) byKeyword.set(k, [...(byKeyword.get(k) ?? []), rule]);
    }
    const escaped = [...byKeyword.keys()]
      .sort((a, b) => b.length - a.length)
      .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    found = {
      keywords: new RegExp(escaped.join('|') || '(?!)', 'g'),
      byKeyword,
      wholeText: rules.filter((rule) => WHOLE_TEXT.has(rule.id)),
    };
    compiled.set(rules, found);
  }
  return found;
}

const orders = new WeakMap<readonly SecretRule[], Map<SecretRule, number>>();
const orderOf = (rules: readonly SecretRule[]) => {
  let order = orders.get(rules);
  if (!order) {
    order = new Map(rules.map((rule, i) => [rule, i]));
    orders.set(rules, order);
  }
  return order;
};

/**
 * Finds secret-looking values in one text file. One pass of a combined keyword regex over the
 * lower-cased text picks the lines worth a look and the rules to run on each (gitleaks' keyword
 * prefilter); the rules' regexes then run on those lines only. A flag names the file, line and
 * rule, never the value: reports are printed and sent to the service.
 */
export function scanText(file: string, text: string, rules = SECRET_RULES): ScanFlag[] {
  const compiledRules = compile(rules);
  const { keywords, byKeyword } = compiledRules;
  const lower = text.toLowerCase();
  const starts = lineStarts(text);
  // line number → rules to run on it
  const work = new Map<number, Set<SecretRule>>();
  const wholeText = new Set<SecretRule>(
    compiledRules.wholeText.filter((rule) => rule.keywords.some((k) => lower.includes(k))),
  );
  keywords.lastIndex = 0;
  for (const match of lower.matchAll(keywords)) {
    const line = lineOf(starts, match.index);
    for (const rule of byKeyword.get(match[0]) ?? []) {
      const set = work.get(line) ?? new Set();
      set.add(rule);
      work.set(line, set);
    }
  }
  if (work.size === 0 && wholeText.size === 0) return [];
  const state: ScanState = { file, starts, flags: [], seen: new Set() };
  // Rules in their list order, so a specific rule claims a value before the generic one.
  const order = orderOf(rules);
  for (const [line, set] of [...work].sort((a, b) => a[0] - b[0])) {
    const from = starts[line - 1] as number;
    const to = line < starts.length ? (starts[line] as number) - 1 : text.length;
    const chunk = text.slice(from, to);
    const ordered =
      set.size === 1 ? set : [...set].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    for (const rule of ordered) collect(state, rule, chunk, from);
  }
  // After the specific rules, so they name a value before the generic rule can.
  for (const rule of wholeText) collect(state, rule, text, 0);
  const flags = state.flags;
  return flags.sort((a, b) => a.line - b.line || a.rule.localeCompare(b.rule));
}

/** Scans a file's bytes: binaries and files over `MAX_SCAN_BYTES` are skipped. */
export function scanBytes(file: string, bytes: Uint8Array): ScanFlag[] | 'skipped' {
  if (bytes.length > MAX_SCAN_BYTES || isBinary(bytes)) return 'skipped';
  return scanText(file, Buffer.from(bytes).toString('utf8'));
}
