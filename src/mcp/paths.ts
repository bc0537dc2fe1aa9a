// Which URLs a tool call may reach (docs/mcp.md §What a tool can reach): a path under /v1 and
// nothing else. The path is checked as text before it is sent, so no later normalisation (the
// router's, a proxy's) can turn it into another place: an absolute URL, a scheme-relative `//`,
// a backslash, a `.` or `..` segment (also percent-encoded), an encoded `/`, control characters
// and fragments are refused outright, never repaired.

export type QueryValue = string | number | boolean | null | readonly (string | number | boolean)[];

/** Why a path was refused; the message names the rule. */
export class PathRefused extends Error {
  override name = 'PathRefused';
}

// Characters a path segment may hold as themselves (RFC 3986 pchar without `%`), plus `%XX`.
/** Whether `s` holds a C0 control character, DEL, or one of `also`. */
function holds(s: string, also: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || also.includes(s[i] as string)) return true;
  }
  return false;
}
const SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@[\]]|%[0-9A-Fa-f]{2})*$/;

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new PathRefused('the path holds a malformed percent-encoding');
  }
}

/**
 * `path` (which may carry its own `?query`) and `query`, as one request target under /v1. The
 * path's query goes on as written, non-ASCII percent-encoded: its escapes are the API's to judge,
 * never repaired (docs/mcp.md §What a tool can reach).
 */
export function apiTarget(path: string, query: Readonly<Record<string, QueryValue | undefined>> = {}): string {
  if (typeof path !== 'string' || path.length === 0) throw new PathRefused('the path is empty');
  if (path.length > 8192) throw new PathRefused('the path is longer than 8192 characters');
  if (holds(path, ' \\#')) throw new PathRefused('the path holds white space, a control character, a backslash or a fragment');
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  const ownQuery = q === -1 ? '' : path.slice(q + 1);
  if (!pathname.startsWith('/v1/') && pathname !== '/v1') throw new PathRefused('the path must start with /v1/ (no scheme, host or other prefix)');
  const segments = pathname.slice(1).split('/');
  for (const [i, segment] of segments.entries()) {
    if (segment === '' && i < segments.length - 1) throw new PathRefused('the path holds an empty segment (//)');
    if (!SEGMENT.test(segment)) throw new PathRefused('the path holds a character that must be percent-encoded');
    const decoded = segment.includes('%') ? decodedSegment(segment) : segment;
    if (decoded === '.' || decoded === '..') throw new PathRefused('the path holds a . or .. segment');
    if (holds(decoded, '/\\')) throw new PathRefused('the path holds an encoded slash, backslash or control character');
  }
  const parts = ownQuery === '' ? [] : [ownQuery.replace(NOT_ASCII, encodedPart)];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) parts.push(`${encodedPart(key)}=${encodedPart(String(v))}`);
  }
  return parts.length === 0 ? pathname : `${pathname}?${parts.join('&')}`;
}

// A code point outside ASCII, a lone surrogate too.
const NOT_ASCII = /[\u0080-\u{10ffff}]/gu;

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * `s` percent-encoded as a query string's key or value, as UTF-8; a lone surrogate, which UTF-8
 * cannot hold, as the three bytes it would take, which the API refuses as no UTF-8 exactly as it
 * refuses them over HTTP (docs/errors.md §Query parameters), where a replacement character would
 * make a filter look for another value.
 */
function encodedPart(s: string): string {
  if (s.isWellFormed()) return encodeURIComponent(s);
  let out = '';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    out += ch.isWellFormed() ? encodeURIComponent(ch) : hex(0xe0 | (c >> 12)) + hex(0x80 | ((c >> 6) & 0x3f)) + hex(0x80 | (c & 0x3f));
  }
  return out;
}
