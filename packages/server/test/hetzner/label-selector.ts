import { invalidInput } from './errors.js';

/** One comma-separated term of a label selector; all terms must hold (AND). */
type Term =
  | { readonly kind: 'equals' | 'not_equals'; readonly key: string; readonly value: string }
  | { readonly kind: 'exists' | 'absent'; readonly key: string }
  | { readonly kind: 'in' | 'notin'; readonly key: string; readonly values: string[] };

export type Labels = Readonly<Record<string, string>>;

// Hetzner's label grammar (description, "Labels"): a name of ≤ 63 characters starting and
// ending alphanumeric, an optional DNS-subdomain prefix before a slash.
const NAME = /^[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function keyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) return `invalid label key ${key}`;
  if (prefix === undefined) return undefined;
  if (prefix.length > 253 || !prefix.split('.').every((label) => DNS_LABEL.test(label)))
    return `invalid label key prefix ${prefix}`;
  if (prefix === 'hetzner.cloud' || prefix.endsWith('.hetzner.cloud'))
    return 'the hetzner.cloud/ prefix is reserved';
  return undefined;
}

function valueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  return value.length <= 63 && NAME.test(value) ? undefined : `invalid label value ${value}`;
}

/** Throws 422 `invalid_input` on the `labels` field for a key or value Hetzner refuses. */
export function validateLabels(labels: unknown, field = 'labels'): Record<string, string> {
  if (labels === undefined || labels === null) return {};
  if (typeof labels !== 'object' || Array.isArray(labels))
    throw invalidInput(field, 'must be an object');
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== 'string') throw invalidInput(field, `value of ${key} must be a string`);
    const problem = keyProblem(key) ?? valueProblem(value);
    if (problem) throw invalidInput(field, problem);
    result[key] = value;
  }
  return result;
}

/** Splits on commas outside parentheses: `a in (x,y),b` is two terms. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const char = selector[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms.map((term) => term.trim());
}

function parseTerm(text: string): Term | undefined {
  const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(text);
  if (set) {
    const values = set[3]!.split(',').map((value) => value.trim());
    return { kind: set[2] as 'in' | 'notin', key: set[1]!, values };
  }
  const comparison = /^([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)$/.exec(text);
  if (comparison) {
    const kind = comparison[2] === '!=' ? 'not_equals' : 'equals';
    return { kind, key: comparison[1]!, value: comparison[3]! };
  }
  if (/^!\s*[^=!\s]+$/.test(text)) return { kind: 'absent', key: text.slice(1).trim() };
  if (/^[^=!\s(),]+$/.test(text)) return { kind: 'exists', key: text };
  return undefined;
}

/** Parses a selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`). */
export function parseLabelSelector(selector: string): (labels: Labels) => boolean {
  const terms: Term[] = [];
  for (const text of splitTerms(selector)) {
    const term = parseTerm(text);
    if (!term || keyProblem(term.key))
      throw invalidInput('label_selector', `invalid label selector term '${text}'`);
    terms.push(term);
  }
  return (labels) => terms.every((term) => holds(term, labels));
}

function holds(term: Term, labels: Labels): boolean {
  const value = Object.hasOwn(labels, term.key) ? labels[term.key] : undefined;
  switch (term.kind) {
    case 'equals':
      return value === term.value;
    case 'not_equals':
      return value !== term.value;
    case 'exists':
      return value !== undefined;
    case 'absent':
      return value === undefined;
    case 'in':
      return value !== undefined && term.values.includes(value);
    case 'notin':
      return value === undefined || !term.values.includes(value);
  }
}
