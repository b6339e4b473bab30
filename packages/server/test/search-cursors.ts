import fc from 'fast-check';

/** A cursor holding `key`, encoded as the search encodes its own (base64url JSON). */
export const cursorOf = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

const ID = '0b0e2d36-0f6a-4c1e-9a57-2c1f0f1e7d10';
const AT = '2026-03-01T12:00:00.000000Z';

/**
 * Keys in the search cursor's own format whose values no calendar has or no column holds, each
 * with the sort it is for: every one must be a 400 naming `cursor`.
 */
export const MALFORMED_CURSORS: [string, unknown[]][] = [
  ['recent', ['recent', '2026-13-01T12:00:00.000000Z', ID]],
  ['recent', ['recent', '0000-01-01T12:00:00.000000Z', ID]],
  ['recent', ['recent', '2026-02-30T12:00:00.000000Z', ID]],
  ['recent', ['recent', '2026-03-01T24:00:00.000000Z', ID]],
  ['recent', ['recent', '2026-03-01T12:60:00.000000Z', ID]],
  ['recent', ['recent', '2026-03-01T12:00:60.000000Z', ID]],
  ['relevance', ['relevance', '1e-99999', AT, ID]],
  ['relevance', ['relevance', '1e99999', AT, ID]],
  ['relevance', ['relevance', '1e39', AT, ID]],
  ['relevance', ['relevance', '1e-46', AT, ID]],
  ['relevance', ['relevance', '0', '2026-04-31T00:00:00.000000Z', ID]],
  ['adoptions', ['adoptions', 2 ** 53 - 1, AT, ID]],
  ['adoptions', ['adoptions', 2 ** 31, AT, ID]],
  ['adoptions', ['adoptions', -1, AT, ID]],
];

const digits = (n: number) =>
  fc.integer({ min: 0, max: 10 ** n - 1 }).map((v) => String(v).padStart(n, '0'));

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ` with any digits: mostly no real instant. */
const timestampText = fc
  .tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(6))
  .map(([y, mo, d, h, mi, s, us]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${us}Z`);

/** A `Date` of any millisecond, as ISO text with microseconds or milliseconds. */
const realTimestamp = fc
  .date({ noInvalidDate: true, min: new Date('0001-01-01'), max: new Date('9999-12-31') })
  .chain((d) => fc.constantFrom(d.toISOString(), d.toISOString().replace('Z', '000Z')));

/** Numbers as text in the shapes a rank takes, from underflow to overflow. */
const rankText = fc.oneof(
  fc.stringMatching(/^(?:0|[0-9]{1,3}(?:\.[0-9]{1,12})?(?:e-?[0-9]{1,6})?)$/),
  fc.double({ min: 0, noNaN: true }).map(String),
  fc.constantFrom('0', '1e-20', '6.0792705e-05', '1e-38', '1e-45', '3.4028235e38', '1e39'),
);

const anyNumber = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, -0, 1e308),
);

const key = (sort: string, first: fc.Arbitrary<unknown>[]) =>
  fc.tuple(
    fc.constant(sort),
    ...first,
    fc.oneof(timestampText, realTimestamp, fc.string()),
    fc.oneof(fc.uuid(), fc.string()),
  );

/**
 * Search and audit cursors as they are made (base64url JSON of a key), holding values in and out
 * of their ranges, and now and then plain text: what a client can hand back after editing one.
 */
export const cursorArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: key('recent', []).map(cursorOf) },
  { weight: 4, arbitrary: key('relevance', [rankText]).map(cursorOf) },
  { weight: 4, arbitrary: key('adoptions', [anyNumber]).map(cursorOf) },
  {
    weight: 2,
    arbitrary: fc
      .record({ at: fc.oneof(timestampText, realTimestamp, fc.string()), id: fc.uuid() })
      .map(cursorOf),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.jsonValue().map(cursorOf) },
);
