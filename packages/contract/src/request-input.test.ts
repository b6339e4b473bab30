import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
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
});
