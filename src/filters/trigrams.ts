// Trigrams of folded text (docs/filtering.md §Indexes): what the trigram index stores for a value
// and what a `contains` needle is looked up by. Code points, not UTF-16 units, so that a letter
// outside the Basic Multilingual Plane counts as one character on both sides.
import type { ValueType } from '../lib/resource-schemas.ts';

/** The valueTypes filtered with `contains`, whose values the trigram index holds. */
export const CONTAINS_TYPES: ReadonlySet<ValueType> = new Set<ValueType>(['EMAIL', 'TELEPHONE', 'URL']);

/** The distinct trigrams of `folded` (already folded text); none when it is shorter than 3. */
export function trigrams(folded: string): string[] {
  const cps = Array.from(folded);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= cps.length; i++) out.add(cps[i]! + cps[i + 1]! + cps[i + 2]!);
  return [...out];
}

/**
 * The least string greater than every string that starts with `prefix`, in code point order
 * (UTF-8 byte order): the exclusive upper bound of a prefix range. Null when there is none (a
 * prefix of only U+10FFFF characters).
 */
export function prefixEnd(prefix: string): string | null {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return cps.join('') + String.fromCodePoint(next);
    }
  }
  return null;
}

/** `s` as a LIKE pattern that matches it literally (`\` escapes `%`, `_` and itself). */
export function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
