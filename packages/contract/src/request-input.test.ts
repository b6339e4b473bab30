import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FirewallRules } from './firewall.js';
import { INVALID_TEXT, parseRequestPart, textIssues } from './request-input.js';

const paths = (value: unknown) => textIssues(value, ['body']).map((issue) => issue.path);

describe('textIssues', () => {
  it('names every string with a NUL or an unpaired surrogate, however deep, keys included', () => {
    const value = {
      name: 'a\u0000b',
      tags: ['fine', '\ud800x'],
      nested: { deeper: [{ note: 'x\udfff' }] },
      record: { 'key\u0000': 'fine' },
      count: 3,
      flag: true,
      none: null,
    };
    expect(paths(value).sort()).toEqual(
      [
        ['body', 'name'],
        ['body', 'tags', 1],
        ['body', 'nested', 'deeper', 0, 'note'],
        ['body', 'record'],
      ].sort(),
    );
    expect(textIssues(value).every((issue) => issue.code === INVALID_TEXT)).toBe(true);
  });

  it('accepts any well-formed text, surrogate pairs (emoji) included', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // fast-check's JSON strings are well-formed; NUL is the one character to leave out.
        const clean = JSON.parse(JSON.stringify(value).replaceAll('\\u0000', ''));
        expect(textIssues(clean)).toEqual([]);
      }),
    );
    expect(textIssues({ name: 'Crab 🦀 café', '🦀': ['𝄞'] })).toEqual([]);
  });

  it('finds every spoiled string it is given, wherever it is put', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff'),
        (strings, at, bad) => {
          const index = at % strings.length;
          const spoiled = strings.map((s, i) => (i === index ? `${s}${bad}` : s));
          expect(paths({ list: spoiled })).toEqual([['body', 'list', index]]);
        },
      ),
    );
  });

  it('walks a body nested far deeper than the call stack without overflowing', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(textIssues(deep)).toHaveLength(1);
  });
});

describe('parseRequestPart', () => {
  const schema = z.object({ name: z.string().min(1).trim() });

  it('checks the text before the schema, so only the text issue is reported', () => {
    const result = parseRequestPart(schema, { name: '\u0000', extra: 1 }, 'body');
    expect(result).toEqual({
      success: false,
      issues: [{ path: ['body', 'name'], message: expect.any(String), code: INVALID_TEXT }],
    });
  });

  it("answers the schema's own issues under the part's name, and its output on success", () => {
    expect(parseRequestPart(schema, { name: '' }, 'query')).toMatchObject({
      success: false,
      issues: [{ path: ['query', 'name'], code: 'too_small' }],
    });
    expect(parseRequestPart(schema, { name: ' Crab 🦀 ' }, 'body')).toEqual({
      success: true,
      data: { name: 'Crab 🦀' },
    });
  });

  it("says zod's own issues in sentences, keeps a schema's own message, one issue per field", () => {
    const form = z.object({
      name: z.string().min(1).max(5),
      slug: z
        .string()
        .min(1)
        .regex(/^[a-z]+$/, 'Use lower-case letters'),
      size: z.enum(['small', 'large']),
      mail: z.email(),
      count: z.number().int().min(1),
    });
    const result = parseRequestPart(form, { name: '', slug: '', size: 'huge', mail: 'x' }, 'body');
    expect(result).toEqual({
      success: false,
      issues: [
        { path: ['body', 'name'], message: 'This cannot be empty.', code: 'too_small' },
        // Empty breaks both of the slug's rules; the first is enough to fix it.
        { path: ['body', 'slug'], message: 'This cannot be empty.', code: 'too_small' },
        {
          path: ['body', 'size'],
          message: 'Choose one of "small", "large".',
          code: 'invalid_value',
        },
        {
          path: ['body', 'mail'],
          message: 'This is not an e-mail address.',
          code: 'invalid_format',
        },
        { path: ['body', 'count'], message: 'This is required.', code: 'invalid_type' },
      ],
    });
    expect(parseRequestPart(form.shape.slug, 'A', 'body')).toMatchObject({
      issues: [{ message: 'Use lower-case letters' }],
    });
  });

  it('names the firewall source that is not an address', () => {
    const rules = {
      rules: [{ protocol: 'tcp', port: '22', sourceIps: ['10.0.0.0/8', '1.2.3.999'] }],
    };
    expect(parseRequestPart(FirewallRules, rules, 'body')).toMatchObject({
      issues: [
        {
          path: ['body', 'rules', 0, 'sourceIps', 1],
          message: expect.stringMatching(/^"1\.2\.3\.999" is not an IPv4 or IPv6 address/),
        },
      ],
    });
  });
});
