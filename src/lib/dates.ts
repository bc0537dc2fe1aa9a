// ISO 8601 date-times as the API takes them (docs/errors.md §Dates): a date, a time with seconds
// and fractions optional, and a time zone (Z or ±hh:mm); `T` and `Z` in either case, as RFC 3339
// allows. Record values, filters, meeting dates and every import read them here, so all take one
// set of forms. A value that names no real instant, such as 2026-02-30 or 24:00, is refused, never
// carried over into the next day or month the way Date.parse would. Nor is one whose instant falls outside the years 0000 to 9999 in UTC
// (`0000-01-01T00:00:00+01:00`): it is answered in UTC, and toISOString writes such a year in the
// six-digit form (`-000001-…`, `+010000-…`) that no write or filter takes back.
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * The longest duration an operator may give (`--expires-in`, `--older-than`; docs/cli.md §The
 * operator CLI): 100 years, so that now plus or minus it is an instant a Date holds and an answer
 * writes with a four-digit year.
 */
export const MAX_DURATION_DAYS = 36_500;
export const MAX_DURATION_MS = MAX_DURATION_DAYS * 86_400_000;

const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The instant `value` names in milliseconds since the epoch, or NaN when it is not such a
 * date-time, names no real date or time, or falls outside the years 0000 to 9999 in UTC.
 */
export function parseIsoDateTime(value: string): number {
  const m = ISO.exec(value);
  if (!m) return NaN;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offH = 0, offM = 0] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return NaN;
  if (hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return NaN;
  const ms = Date.parse(value);
  return ms >= FIRST_INSTANT && ms <= LAST_INSTANT ? ms : NaN;
}

/**
 * The later of two timestamps as the server writes them (`isoNow`: UTC, milliseconds, a four-digit
 * year), which therefore order as text. A write stamps a record with the later of its request's
 * clock and the record's stored `updatedAt`, so that a write committed after another never carries
 * an earlier time (docs/records.md §Times of writes).
 */
export function laterIso(a: string, b: string): string {
  return a >= b ? a : b;
}
