// ISO 8601 date-times as the API takes them (docs/errors.md §Dates): a date, a time with seconds
// and fractions optional, and a time zone (Z or ±hh:mm). A value that names no real instant, such
// as 2026-02-30 or 24:00, is refused, never carried over into the next day or month the way
// Date.parse would.
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The instant `value` names in milliseconds since the epoch, or NaN when it is not such a date-time or names no real date or time. */
export function parseIsoDateTime(value: string): number {
  const m = ISO.exec(value);
  if (!m) return NaN;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offH = 0, offM = 0] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return NaN;
  if (hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return NaN;
  return Date.parse(value);
}
