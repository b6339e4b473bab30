import { describe, expect, it } from 'vitest';
import { formatResult, formatTable } from './output.js';

const rows = [
  { id: 'a1', email: 'ada@example.com', verifiedAt: null },
  { id: 'b22', email: 'bo@example.com', verifiedAt: '2025-01-01T00:00:00.000Z' },
];

describe('admin output', () => {
  it('prints a list as a table on a terminal, aligned under its keys', () => {
    const text = formatResult(rows, { json: false, terminal: true, list: true });
    expect(text.split('\n')).toEqual([
      'id   email            verifiedAt',
      'a1   ada@example.com  -',
      'b22  bo@example.com   2025-01-01T00:00:00.000Z',
    ]);
    expect(formatTable(rows)).toBe(text);
    expect(formatResult([], { json: false, terminal: true, list: true })).toBe('(none)');
  });

  it('prints JSON with --json, and whenever stdout is no terminal', () => {
    for (const options of [
      { json: true, terminal: true, list: true },
      { json: false, terminal: false, list: true },
    ]) {
      expect(JSON.parse(formatResult(rows, options))).toEqual(rows);
    }
    expect(formatResult('a message', { json: true, terminal: true })).toBe('"a message"');
  });

  it('prints an object as key: value lines and a message as it is on a terminal', () => {
    expect(
      formatResult({ id: 'x', subscriptionActive: true }, { json: false, terminal: true }),
    ).toBe('id:                  x\nsubscriptionActive:  true');
    expect(formatResult('sent', { json: false, terminal: false })).toBe('sent');
  });
});
