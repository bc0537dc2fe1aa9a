// Ids are opaque to clients, prefixed by kind and time-sortable: 10 characters of millisecond
// timestamp then 16 random characters, in Crockford base32 (a ULID without the dash-free ambiguity
// of case: always lower case). Sorting ids as strings sorts them by creation time.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdKind = 'req' | 'ws' | 'usr' | 'key' | 'lst' | 'acc' | 'con' | 'opp' | 'msg' | 'chn' | 'fil' | 'kn';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(): string {
  const bytes = randomBytes(16);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${kind}_${encodeTime(now)}${encodeRandom()}`;
}

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API and the database. */
export function isoNow(now: number = Date.now()): string {
  return new Date(now).toISOString();
}
