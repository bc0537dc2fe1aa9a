// TELEPHONE values (docs/records.md §Telephone numbers): validated with libphonenumber-js and stored
// in E.164, with the extension as `;ext=N`. A number written without `+` is read in the default
// country of its field (or workspace); without one it cannot be placed and is refused.
import { createRequire } from 'node:module';
import type { CountryCode } from 'libphonenumber-js';
import { InputError } from './errors.ts';
import { longerThan } from './chars.ts';

type Lib = typeof import('libphonenumber-js');
let lib: Lib | undefined;
const require = createRequire(import.meta.url);
/**
 * libphonenumber-js, loaded by the first number or country checked rather than at start: its
 * metadata stays out of a process that never sees a TELEPHONE value (docs/performance.md
 * §Loading only what is configured). Loaded synchronously, since the checks that need it are.
 */
function phoneLib(): Lib {
  return (lib ??= require('libphonenumber-js') as Lib);
}

export function isPhoneCountry(code: string): boolean {
  return phoneLib().isSupportedCountry(code);
}

/**
 * The text a number is read from: compatibility forms as their plain characters (NFKC: a full-width
 * `＋４９` is `+49`), without the invisible format characters that text copied from a
 * right-to-left page or a rich text carries (the marks U+200E and U+200F, the embeddings and
 * isolates U+202A to U+202E and U+2066 to U+2069, a zero-width space), and without the white space
 * around it. None of them is part of a number, which is stored as E.164 (docs/records.md
 * §Telephone numbers).
 */
function readable(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .trim();
}

/**
 * `+E164` or `+E164;ext=N` when `text` is a valid number (a national one read in `country`), else
 * null. The number's digits, written in any script libphonenumber reads (`٤٩`, `４９`), come out
 * as ASCII digits, and so do the extension's, so that a number has one stored form.
 */
export function e164(text: string, country: string | null): string | null {
  const { isSupportedCountry, parsePhoneNumberFromString, parseDigits } = phoneLib();
  const region: CountryCode | undefined = country !== null && isSupportedCountry(country) ? country : undefined;
  // The whole text must be the number (no extraction from surrounding words).
  const p = parsePhoneNumberFromString(readable(text).replace(/^tel:/i, ''), { ...(region ? { defaultCountry: region } : {}), extract: false });
  if (!p || !p.isValid()) return null;
  return p.ext ? `${p.number};ext=${parseDigits(p.ext)}` : p.number;
}

/** A TELEPHONE value as stored: E.164 with an optional `;ext=`; InputError when it is not a valid number. */
export function normalizePhone(text: string, country: string | null): string {
  if (longerThan(text, 64)) throw new InputError('must be a telephone number of at most 64 characters', '');
  const out = e164(text, country);
  if (out !== null) return out;
  if (country === null && !/^(?:tel:)?\+/i.test(readable(text)))
    throw new InputError('has no "+" and country code, and neither its field nor the workspace has a default country: write it as "+49 30 1234567"', '');
  throw new InputError('must be a valid telephone number such as "+49 30 1234567" (stored as E.164, an extension as ";ext=12")', '');
}

/**
 * A `contains` needle for stored TELEPHONE values (docs/filtering.md §Matching): digits written
 * with separators lose the separators (`30 123-4` → `301234`), so that a part of a number matches
 * the E.164 text it is stored as. A whole valid number becomes its E.164 form only when those
 * digits are not already part of it (a national prefix, `030 1234567` → `+49301234567`): a run of
 * digits that also reads as a short valid number (`12345` in DE) still matches every stored
 * number holding it.
 */
export function phoneNeedle(written: string, country: string | null): string {
  // A value of invisible characters alone stays as written: an empty needle would match every number.
  const text = readable(written) || written;
  const digits = /^[\d\s().+-]+$/.test(text) && /\d/.test(text) ? text.replace(/[\s().-]/g, '') : null;
  const whole = e164(text, country);
  if (whole !== null && (digits === null || !whole.includes(digits))) return whole;
  return digits ?? text;
}
