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
