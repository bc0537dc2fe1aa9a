// Case folding for matching text without regard to case (docs/records.md §Value index): the same
// function folds what the value index stores and what a filter or a lookup asks for, so the two
// always agree. NFKC first, so that compatibility forms (ﬁ, full-width letters) match their
// plain spelling; then lower case, which JavaScript applies by the Unicode tables.
export function foldText(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}
