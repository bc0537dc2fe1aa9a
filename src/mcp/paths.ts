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

/** `path` (which may carry its own `?query`) and `query`, as one request target under /v1. */
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
  const extra = Object.entries(query).filter(([, value]) => value !== undefined && value !== null);
  if (extra.length === 0 && ownQuery === '') return pathname;
  const params = new URLSearchParams(ownQuery);
  for (const [key, value] of extra) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
  }
  const search = params.toString();
  return search === '' ? pathname : `${pathname}?${search}`;
}
