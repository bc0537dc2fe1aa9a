// Signed capabilities for the byte endpoints: `<kind>.<fileId>.<expiry>.<mac>`. The MAC covers the
// kind, so an upload token can never be used to download and vice versa; it is checked before
// anything else is touched, so a forged token costs no database work.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'u' | 'd';

export interface Capability {
  kind: TokenKind;
  fileId: string;
  /** ms since epoch: the token is valid strictly before. */
  expires: number;
}

function mac(secret: Buffer, kind: TokenKind, fileId: string, expires: number): Buffer {
  return createHmac('sha256', secret).update(`rolodex-file-capability\n${kind}\n${fileId}\n${expires}`).digest();
}

export function signToken(secret: Buffer, kind: TokenKind, fileId: string, expiresAtMs: number): string {
  const expires = Math.floor(expiresAtMs);
  return `${kind}.${fileId}.${expires}.${mac(secret, kind, fileId, expires).toString('base64url')}`;
}

const SHAPE = /^([ud])\.([a-z]{2,4}_[0-9a-z]{26})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

export type TokenCheck = { ok: true; cap: Capability } | { ok: false; reason: 'malformed' | 'signature' | 'kind' | 'expired' };

/** Verifies a token for `kind` at `nowMs`. */
export function verifyToken(secret: Buffer, token: string, kind: TokenKind, nowMs: number): TokenCheck {
  const m = SHAPE.exec(token);
  if (!m) return { ok: false, reason: 'malformed' };
  const [, k, fileId, exp, sig] = m as unknown as [string, TokenKind, string, string, string];
  const expires = Number(exp);
  const given = Buffer.from(sig, 'base64url');
  const want = mac(secret, k, fileId, expires);
  // base64url decoding ignores trailing bits: re-encode so that one changed character always fails.
  if (given.length !== want.length || given.toString('base64url') !== sig || !timingSafeEqual(given, want)) return { ok: false, reason: 'signature' };
  if (k !== kind) return { ok: false, reason: 'kind' };
  if (nowMs >= expires) return { ok: false, reason: 'expired' };
  return { ok: true, cap: { kind: k, fileId, expires } };
}
