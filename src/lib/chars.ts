// The length of a text as every limit of the API and the import counts it (docs/errors.md
// §Lengths): in characters, that is Unicode code points, so that 😀 is one character as é is, as a
// route schema's `maxLength` counts them. String.length counts UTF-16 units, two for 😀.

/** The characters (code points) of `s`. */
export function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Whether `s` has more than `max` characters; a text of at most `max` UTF-16 units has at most `max` characters. */
export function longerThan(s: string, max: number): boolean {
  return s.length > max && chars(s) > max;
}

// What shows as nothing (docs/records.md §Writing fields): white space, control characters, and
// the invisible ones an EMAIL value may not hold (src/lib/email.ts): format characters (U+200B,
// U+2060, U+FEFF, the soft hyphen, bidi marks) and the other default-ignorable code points
// (variation selectors, Hangul fillers). A required text (a name, a title) of these alone is none.
const SHOWS_NOTHING = /^[\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u;

/** Whether `s` holds no character that shows: empty, or white space, control and invisible characters alone. */
export function blank(s: string): boolean {
  return SHOWS_NOTHING.test(s);
}

/**
 * Orders two texts by code point, as SQLite compares UTF-8 bytes, never by a language's collation
 * (a PostgreSQL database may have one): what an export orders by text comes out alike on both
 * databases (docs/import.md §Export). UTF-16 units order a character beyond U+FFFF (two surrogate
 * units, D800–DFFF) before one of E000–FFFF, so those units are moved above them to compare.
 */
export function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Orders rows by several keys in turn: texts by code point (`byCodePoint`), numbers as numbers. */
export function byKeys<T>(...keys: Array<(row: T) => string | number>): (a: T, b: T) => number {
  return (a, b) => {
    for (const key of keys) {
      const [x, y] = [key(a), key(b)];
      const d = typeof x === 'number' && typeof y === 'number' ? x - y : byCodePoint(String(x), String(y));
      if (d !== 0) return d;
    }
    return 0;
  };
}
