// API key secrets: `rdx_<prefix>_<secret>`. 32 random bytes of secret; only the SHA-256 of the
// whole string is stored, and the prefix identifies a key in listings without revealing it.
import { hash, randomBytes } from 'node:crypto';

const FORMAT = /^rdx_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;

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
