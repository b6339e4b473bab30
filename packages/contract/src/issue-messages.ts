import type { z } from 'zod';

/** What an error map receives: zod's issue before it gets a message. */
type RawIssue = z.core.$ZodRawIssue;

const FORMATS: Readonly<Record<string, string>> = {
  email: 'an e-mail address',
  uuid: 'an id',
  guid: 'an id',
  url: 'a URL',
  datetime: 'a date and time such as 2026-01-31T12:00:00Z',
  date: 'a date such as 2026-01-31',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  cidrv4: 'an IPv4 CIDR',
  cidrv6: 'an IPv6 CIDR',
};

const TYPES: Readonly<Record<string, string>> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};

const count = (n: number | bigint, one: string, many: string) =>
  `${n} ${Number(n) === 1 ? one : many}`;

const quote = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));

/**
 * A sentence for each of zod's own issues, for the fields whose schema says nothing itself (a
 * schema's own message always wins). Shown next to the field, so it does not name the field.
 * `undefined` leaves zod's default, for issues no person sends.
 */
export function humanIssueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'This is required.';
      return `Use ${TYPES[issue.expected] ?? issue.expected} here.`;
    case 'too_small': {
      const { minimum: min, origin } = issue;
      if (origin === 'string')
        return Number(min) <= 1
          ? 'This cannot be empty.'
          : `Use at least ${count(min, 'character', 'characters')}.`;
      if (origin === 'array' || origin === 'set')
        return Number(min) <= 1 ? 'Give at least one.' : `Give at least ${min}.`;
      return issue.inclusive === false ? `Use a number above ${min}.` : `Use ${min} or more.`;
    }
    case 'too_big': {
      const { maximum: max, origin } = issue;
      if (origin === 'string') return `Use at most ${count(max, 'character', 'characters')}.`;
      if (origin === 'array' || origin === 'set') return `Give at most ${max}.`;
      return issue.inclusive === false ? `Use a number below ${max}.` : `Use ${max} or less.`;
    }
    case 'invalid_format': {
      const what = FORMATS[issue.format];
      if (what) return `This is not ${what}.`;
      return 'This is not in the expected form.';
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `Use ${quote(issue.values[0])}.`
        : `Choose one of ${issue.values.map(quote).join(', ')}.`;
    case 'unrecognized_keys':
      return `${issue.keys.length === 1 ? 'This field is' : 'These fields are'} not known: ${issue.keys.join(', ')}.`;
    case 'not_multiple_of':
      return `Use a multiple of ${issue.divisor}.`;
    case 'invalid_union':
      return 'This is not in any of the accepted forms.';
    default:
      return undefined;
  }
}

/**
 * Zod's issues, one per field: a value can break several rules at once (an empty slug is both too
 * short and not in its pattern), and a person needs only the first to fix it.
 */
export function firstIssuePerPath<T extends { readonly path: readonly PropertyKey[] }>(
  issues: readonly T[],
): T[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = JSON.stringify(issue.path.map(String));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
