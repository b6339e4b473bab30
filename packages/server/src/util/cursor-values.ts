// Checks for the values a client hands back inside a cursor. A cursor is opaque but not signed:
// whatever it holds reaches a SQL cast, and a value PostgreSQL refuses (month 13, an integer
// past its column) would be a 500. Each check accepts exactly what the column can hold.

/** `YYYY-MM-DDTHH:MM:SS` with milliseconds or microseconds, in UTC, as the service writes it. */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3}|\d{6})Z$/;

/**
 * Whether `text` is an instant the calendar has (no 13th month, no 30 February, no hour 24, no
 * leap second), in years 1 to 9999: what `timestamptz` takes and `toISOString` would write back.
 */
export function isIsoInstant(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  const match = ISO_INSTANT.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  if (year === undefined || year < 1) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, (month ?? 0) - 1, day);
  date.setUTCHours(hour ?? 0, minute, second);
  return date.toISOString().slice(0, 19) === text.slice(0, 19);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `value` is a `uuid` as the database writes it (lower-case hex, hyphenated). */
export const isUuid = (value: unknown): value is string =>
  typeof value === 'string' && UUID.test(value);

/** The largest value of a PostgreSQL `integer` column. */
export const MAX_INT4 = 2 ** 31 - 1;

/** Whether `value` fits a non-negative `integer` column. */
export const isCount = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_INT4;

/** The smallest positive normal `real`: below it the cast underflows (PostgreSQL refuses). */
const MIN_NORMAL_REAL = 2 ** -126;

const DECIMAL = /^(?:0|[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?)$/;

/**
 * Whether `text` is a non-negative decimal a `real` holds as written: zero itself, or a value
 * neither past the largest `real` nor so small that it underflows (`1e-99999`).
 */
export function isRealText(text: unknown): text is string {
  if (typeof text !== 'string' || !DECIMAL.test(text)) return false;
  const value = Number(text);
  if (/^[0.]+(?:e|$)/.test(text)) return value === 0;
  const real = Math.fround(value);
  return Number.isFinite(real) && real >= MIN_NORMAL_REAL;
}
