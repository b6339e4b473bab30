import type { BundleCredential } from '@svc/contract';

/** The files whose credentials `stage` strips (home-relative), and how. */
export const OPENCLAW_ENV = '.openclaw/.env';
export const OPENCLAW_JSON = '.openclaw/openclaw.json';

/** Field names in openclaw.json whose string values are credentials. */
const SECRET_FIELD =
  /(?:api[-_]?key|token|secret|password|passwd|credential|private[-_]?key|access[-_]?key|bearer|auth)$/i;

const placeholder = (key: string) => `\${${key}}`;
const isPlaceholder = (value: string) => /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(value);

export interface Stripped {
  readonly text: string;
  readonly credentials: BundleCredential[];
}

/** Every `KEY=value` of an env file becomes `KEY=${KEY}`; comments and layout stay. */
export function stripEnvFile(file: string, text: string): Stripped {
  const credentials: BundleCredential[] = [];
  const lines = text.split('\n').map((line, index) => {
    const match = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)(.*?)(\r?)$/.exec(line);
    if (!match) return line;
    const [, lead = '', key = '', eq = '', rawValue = '', cr = ''] = match;
    const value = rawValue.replace(/^(['"])(.*)\1$/, '$2');
    if (value === '' || isPlaceholder(value)) return line;
    credentials.push({
      key,
      description: `Environment variable from ~/${file}`,
      locations: [`${file}:${index + 1}`],
    });
    return `${lead}${key}${eq}${placeholder(key)}${cr}`;
  });
  return { text: lines.join('\n'), credentials };
}

/** `["models","providers","openai","apiKey"]` → `OPENAI_API_KEY`: the parent names the service. */
function envName(path: readonly string[], taken: Set<string>): string {
  const snake = (s: string) =>
    s
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toUpperCase();
  for (let take = 2; take <= path.length + 1; take++) {
    const name = ['OPENCLAW', ...path.slice(-take).map(snake)].filter(Boolean).join('_');
    const short = take <= path.length ? name.replace(/^OPENCLAW_/, '') : name;
    const candidate = /^[A-Z_]/.test(short) ? short : `OPENCLAW_${short}`;
    if (!taken.has(candidate)) {
      taken.add(candidate);
      return candidate;
    }
  }
  throw new Error('unreachable: the full path is unique');
}

/**
 * Secret-looking string fields of openclaw.json become `${NAME}` placeholders. The file is
 * rewritten with two-space indentation; a file that is not JSON is left alone (the scanner
 * then flags what it finds in it).
 */
export function stripOpenclawJson(file: string, text: string): Stripped {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return { text, credentials: [] };
  }
  const found: { path: string[]; name: string }[] = [];
  const taken = new Set<string>();
  const visit = (node: unknown, path: string[]) => {
    if (Array.isArray(node)) {
      for (const [i, child] of node.entries()) visit(child, [...path, String(i)]);
    } else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      for (const [key, value] of Object.entries(record)) {
        if (
          typeof value === 'string' &&
          SECRET_FIELD.test(key) &&
          value !== '' &&
          !isPlaceholder(value)
        ) {
          const name = envName([...path, key], taken);
          record[key] = placeholder(name);
          found.push({ path: [...path, key], name });
        } else visit(value, [...path, key]);
      }
    }
  };
  visit(root, []);
  if (found.length === 0) return { text, credentials: [] };
  const out = `${JSON.stringify(root, null, 2)}\n`;
  const lines = out.split('\n');
  const credentials = found.map(({ path, name }) => {
    const line = lines.findIndex((l) => l.includes(`"${placeholder(name)}"`)) + 1;
    return {
      key: name,
      description: `${path.join('.')} in ~/${file}`,
      locations: [`${file}:${line}`],
    };
  });
  return { text: out, credentials };
}

/** One entry per key; locations of the same key from several files are merged. */
export function mergeCredentials(lists: readonly BundleCredential[][]): BundleCredential[] {
  const byKey = new Map<string, BundleCredential>();
  for (const c of lists.flat()) {
    const existing = byKey.get(c.key);
    byKey.set(
      c.key,
      existing ? { ...existing, locations: [...existing.locations, ...c.locations] } : c,
    );
  }
  return [...byKey.values()].sort((a, b) => a.key.localeCompare(b.key));
}
