import { RESERVED_SLUGS, SLUG_PATTERN } from '@svc/contract';

/**
 * The personal account slug for an e-mail address: its local part, lower-cased, every run of
 * other characters turned into one `-`; `-2`, `-3`… when taken or reserved.
 */
export function personalSlugBase(email: string): string {
  const local = email.split('@')[0] ?? '';
  const base = local
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 34)
    .replace(/^-+|-+$/g, '');
  return SLUG_PATTERN.test(base) ? base : 'user';
}

/** The first free candidate for `base`, given the slugs that start with it. */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!taken.has(candidate) && !RESERVED_SLUGS.has(candidate)) return candidate;
  }
}
