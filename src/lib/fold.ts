// Case folding for matching text without regard to case (docs/records.md §Value index): the same
// function folds what the value index stores and what a filter or a lookup asks for, so the two
// always agree. NFKC first, so that compatibility forms (ﬁ, full-width letters) match their
// plain spelling; then lower case, which JavaScript applies by the Unicode tables; then the final
// sigma ς as σ, as Unicode case folding has it. Lower-casing is the one mapping of those tables
// that depends on context (Σ becomes ς at the end of a word, σ elsewhere), so without that step a
// text and its prefix could fold differently: `ΑΣ` would fold to `ας` while `ΑΣΤΕΡΙΑ` folds to
// `αστερια`, and a prefix filter would miss it. Migration 0071 folds the values stored before.
export function foldText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replaceAll('ς', 'σ');
}

/**
 * An option label as select filters compare it (docs/filtering.md): folded, runs of white space as
 * one space, trimmed. Two options of one field never share it, so a label matches one option.
 */
export function labelKey(label: string): string {
  return foldText(label).replace(/\s+/gu, ' ').trim();
}

/**
 * The most UTF-8 bytes of a folded text the value index keeps (docs/records.md §Value index):
 * PostgreSQL refuses a B-tree entry over about 2,700 bytes, and a TEXT value may hold 10,000
 * characters. A longer text is indexed by its longest prefix of whole code points within the bound;
 * filter values are at most INDEXED_TEXT_BYTES - 4 bytes, so that equality and prefixes stay exact
 * (a cut text is longer than any filter value, and begins with whatever its whole text begins with).
 */
export const INDEXED_TEXT_BYTES = 2200;

/** `s` (folded) as the value index keeps it: whole, or cut to INDEXED_TEXT_BYTES. */
export function indexedText(s: string): string {
  if (s.length * 3 <= INDEXED_TEXT_BYTES || Buffer.byteLength(s) <= INDEXED_TEXT_BYTES) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > INDEXED_TEXT_BYTES) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}
