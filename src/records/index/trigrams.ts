// Trigrams of folded text (docs/filtering.md §Indexes): what the trigram index stores for a value
// and what a `contains` needle is looked up by. Code points, not UTF-16 units, so that a letter
// outside the Basic Multilingual Plane counts as one character on both sides.
import type { ValueType } from '../../lib/resource-schemas.ts';

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

// The key of one posting list of the trigram index (docs/filtering.md §Indexes): a 53-bit hash of
// (workspace, type, field, trigram), so that a posting is one integer and a record id. Two lists
// that share a key (a collision) merge; every candidate is checked against its own values, so a
// collision costs reads, never a wrong answer. Two 32-bit murmur-style lanes with different seeds;
// the (workspace, type, field) part is hashed once per value, the trigram part per trigram.
function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finish(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The hash state of one (workspace, type, field): what trigramKey continues from. */
export interface FieldHash {
  a: number;
  b: number;
  length: number;
}

export function fieldHash(workspaceId: string, objectType: string, field: string): FieldHash {
  const s = `${workspaceId}\u0000${objectType}\u0000${field}\u0000`;
  let a = 0x9747b28c;
  let b = 0x2f6b1d35;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = mix(a, c);
    b = mix(b, c ^ 0x5bd1e995);
  }
  return { a, b, length: s.length };
}

/** The key of `trigram`'s postings in `base`: a non-negative integer below 2^53. */
export function trigramKey(base: FieldHash, trigram: string): number {
  let { a, b } = base;
  for (let i = 0; i < trigram.length; i++) {
    const c = trigram.charCodeAt(i);
    a = mix(a, c);
    b = mix(b, c ^ 0x5bd1e995);
  }
  return key(a, b, base.length + trigram.length);
}

function key(a: number, b: number, n: number): number {
  return (finish(b, n) & 0x1fffff) * 0x100000000 + finish(a, n);
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * Appends to `keys` the key of each trigram of `folded` in `base` that `keys` does not hold yet:
 * the keys of `trigrams(folded)` through trigramKey, without building a string or a set per
 * trigram. An import computes some 37 million of them at 1,000,000 contacts (docs/import.md
 * §Speed); text without a surrogate pair, the usual case, is hashed from its code units directly.
 */
export function addTrigramKeys(base: FieldHash, folded: string, keys: number[]): void {
  if (SURROGATE.test(folded)) {
    for (const t of trigrams(folded)) {
      const k = trigramKey(base, t);
      if (!keys.includes(k)) keys.push(k);
    }
    return;
  }
  const n = base.length + 3;
  for (let i = 0; i + 3 <= folded.length; i++) {
    const c0 = folded.charCodeAt(i);
    const c1 = folded.charCodeAt(i + 1);
    const c2 = folded.charCodeAt(i + 2);
    const k = key(mix(mix(mix(base.a, c0), c1), c2), mix(mix(mix(base.b, c0 ^ 0x5bd1e995), c1 ^ 0x5bd1e995), c2 ^ 0x5bd1e995), n);
    if (!keys.includes(k)) keys.push(k);
  }
}
