// RFC 6750 in one place (docs/design.md §Requests): what an Authorization header holds, and the
// WWW-Authenticate challenge that each refusal of the key carries.
//
// - No credentials, or credentials of another scheme (`Basic …`): a challenge with no error code
//   (§3.1: "the request lacks any authentication information … or attempted using an
//   unsupported authentication method").
// - `Bearer` with no token, several, or one outside the b64token syntax (§2.1), or two
//   Authorization headers: `invalid_request`.
//   The status stays 401: every refusal of authentication is 401 (docs/design.md §Requests).
// - A token that is unknown, revoked or expired: `invalid_token`.
// - A valid key without a scope the route needs: 403 with `insufficient_scope` and `scope`, the
//   route's scopes (§3.1).

import { severalLines } from './field-lines.ts';

export type Credential = { kind: 'none' } | { kind: 'malformed' } | { kind: 'several' } | { kind: 'token'; token: string };

export type ChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

const NONE: Credential = { kind: 'none' };
const MALFORMED: Credential = { kind: 'malformed' };
const SCHEME = /^bearer$/i;
// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

const SEVERAL: Credential = { kind: 'several' };

/**
 * What the Authorization header carries: nothing usable, a malformed Bearer credential, several
 * credentials (`rawHeaders`, the request's field lines, hold more than one Authorization: two
 * credentials, RFC 6750 §3.1 `invalid_request`, whatever their schemes), or a token.
 */
export function readCredential(header: string | undefined, rawHeaders: readonly string[] = []): Credential {
  if (header === undefined) return NONE;
  if (severalLines(rawHeaders, 'authorization')) return SEVERAL;
  const value = header.trim();
  // The scheme ends at the first space or tab: RFC 7235 asks for spaces, but a tab read as part of
  // the scheme would answer a Bearer credential as none, where every other run of blanks between
  // scheme and token is accepted (docs/design.md §Requests).
  const blank = value.search(/[ \t]/);
  const scheme = blank < 0 ? value : value.slice(0, blank);
  if (!SCHEME.test(scheme)) return NONE;
  const token = blank < 0 ? '' : value.slice(blank).trimStart();
  return B64TOKEN.test(token) ? { kind: 'token', token } : MALFORMED;
}

// An attribute's value is a quoted string of these characters only (RFC 6750 §3).
const UNQUOTABLE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g;

/** The WWW-Authenticate header of a refusal; `error` absent when no credentials came. */
export function challenge(error?: ChallengeError, description?: string, scope?: readonly string[]): { 'WWW-Authenticate': string } {
  let value = 'Bearer realm="rolodex"';
  if (error) value += `, error="${error}"`;
  if (error && description) value += `, error_description="${description.replace(UNQUOTABLE, "'")}"`;
  if (error === 'insufficient_scope' && scope && scope.length > 0) value += `, scope="${scope.join(' ')}"`;
  return { 'WWW-Authenticate': value };
}
