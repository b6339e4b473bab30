import { RESERVED_SLUGS, SLUG_PATTERN } from '@svc/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstFreeSlug, personalSlugBase } from './slugs.js';

describe('personal account slugs', () => {
  it('derive from the local part of the e-mail address', () => {
    expect(personalSlugBase('Ada.Lovelace@example.com')).toBe('ada-lovelace');
    expect(personalSlugBase('__x__y@example.com')).toBe('x-y');
    expect(personalSlugBase('+++@example.com')).toBe('user');
  });

  it('skip taken and reserved candidates', () => {
    expect(firstFreeSlug('ada', new Set())).toBe('ada');
    expect(firstFreeSlug('ada', new Set(['ada', 'ada-2']))).toBe('ada-3');
    expect(firstFreeSlug('api', new Set())).toBe('api-2');
  });

  it('always produce a valid, unreserved slug', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.array(fc.string(), { maxLength: 5 }), (email, taken) => {
        const slug = firstFreeSlug(personalSlugBase(email), new Set(taken));
        expect(slug).toMatch(SLUG_PATTERN);
        expect(RESERVED_SLUGS.has(slug)).toBe(false);
      }),
    );
  });
});
