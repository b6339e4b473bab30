import { describe, expect, it } from 'vitest';
import { isCount, isIsoInstant, isRealText, MAX_INT4 } from './cursor-values.js';

describe('the values a cursor may hold', () => {
  it('takes the instants the calendar has, to the millisecond or the microsecond', () => {
    for (const at of [
      '2024-02-29T23:59:59.999999Z',
      '0001-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
      new Date().toISOString(),
    ])
      expect(isIsoInstant(at), at).toBe(true);
    for (const at of [
      '2023-02-29T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-01T00:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:60:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.0000Z',
      '2026-01-01',
      'Tue Mar 1 2026',
      1_700_000_000_000,
    ])
      expect(isIsoInstant(at), String(at)).toBe(false);
  });

  it('takes a rank a real holds as written, and zero', () => {
    for (const rank of ['0', '0.0', '1e-20', '6.0792705e-05', '0.1', '3.4028235e38', '1e-37'])
      expect(isRealText(rank), rank).toBe(true);
    for (const rank of ['1e-99999', '1e99999', '1e39', '1e-46', '1e-39', '-1', '0x1', 'NaN', 1])
      expect(isRealText(rank), String(rank)).toBe(false);
  });

  it('takes a count an integer column holds', () => {
    for (const n of [0, 1, MAX_INT4]) expect(isCount(n), String(n)).toBe(true);
    for (const n of [-1, 0.5, MAX_INT4 + 1, 2 ** 53 - 1, Number.NaN, '1'])
      expect(isCount(n), String(n)).toBe(false);
  });
});
