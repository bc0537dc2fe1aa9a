// Whether a text holds any of many strings as written, character for character: the rule of
// `holdsText` (src/db/portable.ts), read in this process for many strings at once, so that a purge
// of many records reads the texts that may name them once, not once a record (docs/trash.md §Purge).

/** The first characters of each string that the text is searched for: a record id's type prefix. */
const HEAD = 4;

/**
 * A test of whether a text holds one of `texts`. Each occurrence of a string begins with an
 * occurrence of its first characters (its head), so the text is searched for each distinct head
 * (a handful: the ids' prefixes), and at each place one is found, the string of each length that
 * starts there is looked up. A text holds the empty string, as `instr` and `strpos` say.
 */
export function holdsAny(texts: Iterable<string>): (text: string) => boolean {
  const all = [...new Set(texts)];
  if (all.includes('')) return () => true;
  if (all.length === 0) return () => false;
  // A loop, not Math.min(...): a call takes only so many arguments, and a purge names any number.
  let size = HEAD;
  for (const t of all) size = Math.min(size, t.length);
  const byHead = new Map<string, { lengths: Set<number>; texts: Set<string> }>();
  for (const t of all) {
    const head = t.slice(0, size);
    let group = byHead.get(head);
    if (!group) byHead.set(head, (group = { lengths: new Set(), texts: new Set() }));
    group.lengths.add(t.length);
    group.texts.add(t);
  }
  const groups = [...byHead].map(([head, g]) => ({ head, lengths: [...g.lengths], texts: g.texts }));
  return (text) => {
    for (const { head, lengths, texts } of groups)
      for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, at + 1))
        for (const length of lengths) if (texts.has(text.slice(at, at + length))) return true;
    return false;
  };
}
