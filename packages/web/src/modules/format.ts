const UNITS = ['B', 'KiB', 'MiB', 'GiB'] as const;

/** `1.5 MiB`: steps of 1024, named as such, one decimal, in the reader's locale. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: unit === 0 ? 0 : 1 });
  return `${number.format(value)} ${UNITS[unit]}`;
}

/** Hours with one decimal, from seconds. */
export const formatHours = (seconds: number) =>
  new Intl.NumberFormat(undefined, { maximumFractionDigits: 1, minimumFractionDigits: 1 }).format(
    seconds / 3600,
  );

export const formatDate = (iso: string) =>
  new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(
    new Date(iso),
  );

/** What an amount of money needs besides itself: the price book's or the invoice's currency. */
export interface Currency {
  /** ISO 4217 code. */
  readonly currency: string;
  /** Digits of the minor unit: amounts are integers in it (cents for EUR). */
  readonly minorUnitDigits: number;
}

/** `€12.00`: an integer amount in minor units, in the reader's locale, with every minor digit. */
export function formatMoney(amount: number, { currency, minorUnitDigits }: Currency): string {
  return new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency,
    minimumFractionDigits: minorUnitDigits,
    maximumFractionDigits: minorUnitDigits,
  }).format(amount / 10 ** minorUnitDigits);
}

/** `1 – 31 Jan 2027`: a billing period, whose end is exclusive (the next period's start), in UTC. */
export function formatPeriod(startIso: string, endIso: string): string {
  const lastDay = new Date(new Date(endIso).getTime() - 1);
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).formatRange(
    new Date(startIso),
    lastDay,
  );
}

/** `15 Feb 2027`: a day (due dates), in UTC like the periods. */
export const formatDay = (iso: string) =>
  new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(iso),
  );
