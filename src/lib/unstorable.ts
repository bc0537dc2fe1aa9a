// Text that neither database stores as it was sent (docs/errors.md §Request bodies): a NUL
// character, which PostgreSQL text cannot hold, and half of a surrogate pair (a JSON escape such as
// `\ud800` without its other half), which UTF-8 text cannot hold and both databases would store as
// U+FFFD. A request body and an import line holding one are refused, naming its place, so that
// nothing is stored changed and no write fails halfway with a database error.

/** The path of the first string (or key) of `value` for which `bad` holds ('' for `value` itself), or null. */
export function findString(value: unknown, bad: (s: string) => boolean, path = ''): string | null {
  if (typeof value === 'string') return bad(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findString(value[i], bad, `${path}[${i}]`);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path === '' ? k : `${path}.${k}`;
      if (bad(k)) return here;
      const hit = findString(v, bad, here);
      if (hit !== null) return hit;
    }
  }
  return null;
}

export const hasNul = (s: string): boolean => s.includes('\u0000');

const NUL = 'contains a NUL character';
const LONE = 'contains half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half), which UTF-8 text cannot hold';

/** The place of the first string or key of `value` that cannot be stored as it is, and why; or null. One walk. */
export function unstorableText(value: unknown): { path: string; reason: string } | null {
  let reason = NUL;
  const path = findString(value, (s) => {
    if (hasNul(s)) reason = NUL;
    else if (!s.isWellFormed()) reason = LONE;
    else return false;
    return true;
  });
  return path === null ? null : { path, reason };
}
