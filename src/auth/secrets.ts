// API key secrets: `rdx_<prefix>_<secret>`. 32 random bytes of secret; only the SHA-256 of the
// whole string is stored, and the prefix identifies a key in listings without revealing it.
import { hash, randomBytes } from 'node:crypto';

const FORMAT = /^rdx_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;
// A secret, or the start of one past its prefix, anywhere in a text (`Bearer rdx_…`, cut short).
const IN_TEXT = /rdx_([a-z0-9]{8})_[A-Za-z0-9_-]+/g;
// A whole secret in a text, not part of a longer word.
const WHOLE_IN_TEXT = /(?<![A-Za-z0-9_-])rdx_[a-z0-9]{8}_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/;

export function generateSecret(): { secret: string; prefix: string; hash: string } {
  const prefix = randomBytes(6)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')
    .slice(0, 8);
  const secret = `rdx_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix, hash: hashSecret(secret) };
}

// Every authenticated request hashes its key: the one-shot hash() costs half of a Hash object.
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Cheap shape check so that garbage never reaches the database. */
export function looksLikeSecret(s: string): boolean {
  return FORMAT.test(s);
}

/** Whether `text` holds a secret or a part of one longer than the prefix that listings show. */
export function holdsSecret(text: string): boolean {
  return new RegExp(IN_TEXT.source).test(text);
}

/** The one whole secret `text` holds (pasted alone or after `Bearer `), if any. */
export function secretIn(text: string): string | undefined {
  return WHOLE_IN_TEXT.exec(text)?.[0];
}

/** `text` with each secret in it, or part of one, cut to the prefix listings show (`rdx_ab12cd34…`). */
export function withoutSecrets(text: string): string {
  return text.replace(IN_TEXT, 'rdx_$1…');
}
