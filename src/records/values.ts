// Checks one field value against its valueType (docs/design.md §Record values) and returns it
// normalized (DATETIME to UTC with milliseconds, country codes to upper case, TELEPHONE to E.164,
// SOCIAL_HANDLE to its profile URL). A null value means unset and is valid for every type. Throws
// InputError whose param is the sub-path of the bad part below the value.
import { blank, chars } from '../lib/chars.ts';
import { unheldCharacter } from '../lib/email.ts';
import { InputError } from '../lib/errors.ts';
import { isHttpUrl } from '../lib/http-url.ts';
import type { HandleService } from '../definitions/catalogue.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import type { ValueType } from '../lib/resource-schemas.ts';
import { isCountryCode } from './countries.ts';
import { normalizePhone } from '../lib/phone.ts';
import { normalizeHandle } from './social.ts';

/** An InputError whose param is the path below the field's `value`: `.country`, `[2]`, or '' for the value itself. */
function bad(message: string, at = ''): InputError {
  return new InputError(message, at);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_TEXT = 10_000;
const MAX_MARKDOWN = 100_000;
const MAX_OPTION = 255;

const ADDRESS_STRINGS = ['city', 'country', 'postalCode', 'state', 'street', 'street2'] as const;
const ADDRESS_KEYS = new Set<string>([...ADDRESS_STRINGS, 'latitude', 'longitude']);
const NAME_KEYS = new Set(['firstName', 'lastName']);

function string(v: unknown, max: number, what = 'a string'): string {
  if (typeof v !== 'string') throw bad(`must be ${what}`);
  if (v.length > max && chars(v) > max) throw bad(`must be at most ${max} characters`);
  return v;
}

function plainObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`must be ${what} object`);
  return v as Record<string, unknown>;
}

function address(v: unknown): Record<string, unknown> {
  const o = plainObject(v, 'an Address');
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (!ADDRESS_KEYS.has(k)) throw bad(`has unknown member "${k}"`, `.${k}`);
    if (x === null || x === undefined) continue;
    if (k === 'latitude' || k === 'longitude') {
      const limit = k === 'latitude' ? 90 : 180;
      if (typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) > limit) throw bad(`must be a number from -${limit} to ${limit}`, `.${k}`);
      out[k] = x;
    } else if (k === 'country') {
      if (typeof x !== 'string' || !isCountryCode(x.toUpperCase())) throw bad('must be an ISO 3166-1 alpha-2 country code such as "DE"', '.country');
      out[k] = x.toUpperCase();
    } else {
      if (typeof x !== 'string' || chars(x) > 255) throw bad('must be a string of at most 255 characters', `.${k}`);
      out[k] = x;
    }
  }
  // An address none of whose members shows anything (white space, invisible characters) names no
  // place, as a name with no part names no one: unset is `null`, so `{}` or `{"street": ""}` is refused.
  if (!Object.values(out).some((x) => typeof x === 'number' || !blank(x as string)))
    throw bad('must have a member that is not blank, such as a street, a city or a country (null unsets the field)');
  return out;
}

function fullName(v: unknown): Record<string, unknown> {
  const o = plainObject(v, 'a FullName');
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (!NAME_KEYS.has(k)) throw bad(`has unknown member "${k}"`, `.${k}`);
    if (x === null || x === undefined) continue;
    if (typeof x !== 'string' || chars(x) > 255) throw bad('must be a string of at most 255 characters', `.${k}`);
    out[k] = x;
  }
  // A name with no part that shows a character (not white space or invisible ones) names no one:
  // unset is `null`, so `{}` or `{"firstName": " "}` is refused instead of stored as a name.
  if (!Object.values(out).some((x) => !blank(x as string))) throw bad('must have a firstName or a lastName that is not blank (null unsets the field)');
  return out;
}

function multiSelect(v: unknown): string[] {
  if (!Array.isArray(v)) throw bad('must be an array of strings');
  const seen = new Set<string>();
  v.forEach((x, i) => {
    if (typeof x !== 'string' || x.length < 1 || chars(x) > MAX_OPTION) throw bad(`must be a string of 1 to ${MAX_OPTION} characters`, `[${i}]`);
    if (seen.has(x)) throw bad(`"${x}" appears twice`, `[${i}]`);
    seen.add(x);
  });
  return v as string[];
}

function number(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad('must be a finite number');
  return v;
}

function datetime(v: unknown): string {
  const s = string(v, 64, 'an ISO 8601 date-time string');
  // The one rule of every date-time the server takes (src/lib/dates.ts, docs/errors.md §Dates).
  const ms = parseIsoDateTime(s);
  if (Number.isNaN(ms)) throw bad('must be an ISO 8601 date-time with a time zone naming a real date and time, such as "2026-03-01T09:30:00Z"');
  return new Date(ms).toISOString();
}

// A URL is kept as written, white space around it left out (as around a name), so it must be one
// as written (isHttpUrl, src/lib/formats.ts).
function url(v: unknown): string {
  const s = string(v, 2048).trim();
  if (!isHttpUrl(s)) throw bad('must be an absolute http or https URL (such as "https://acme.com") without spaces');
  return s;
}

// An address is kept as written, so it holds no character an address cannot: a control or an
// invisible one would make it a value apart from the address it reads as (docs/records.md §E-mail
// addresses).
function email(v: unknown): string {
  const s = string(v, 320);
  const unheld = unheldCharacter(s);
  if (unheld !== undefined) throw bad(`must be an email address without control or invisible characters (it holds ${unheld})`);
  if (!EMAIL.test(s)) throw bad('must be an email address');
  return s;
}

function matching(v: unknown, re: RegExp, what: string, max: number): string {
  const s = string(v, max);
  if (!re.test(s)) throw bad(`must be ${what}`);
  return s;
}

/** What a value's field adds to its valueType's rules: TELEPHONE's default country, SOCIAL_HANDLE's service. */
export interface ValueContext {
  defaultCountry?: string | null;
  handleService?: HandleService | null;
}

export function checkValue(type: ValueType, v: unknown, field: ValueContext = {}): unknown {
  if (v === null) return null;
  switch (type) {
    case 'TEXT':
      return string(v, MAX_TEXT);
    case 'MARKDOWN':
      return string(v, MAX_MARKDOWN);
    case 'EMAIL':
      return email(v);
    case 'URL':
      return url(v);
    case 'TELEPHONE':
      return normalizePhone(string(v, 64), field.defaultCountry ?? null);
    case 'SOCIAL_HANDLE':
      return normalizeHandle(string(v, 255), field.handleService ?? null);
    case 'SINGLE_SELECT':
      return matching(v, /^[\s\S]{1,255}$/u, `an option of 1 to ${MAX_OPTION} characters`, MAX_OPTION);
    case 'MULTI_SELECT':
      return multiSelect(v);
    case 'NUMBER':
    case 'CURRENCY':
      return number(v);
    case 'CHECKBOX':
      if (typeof v !== 'boolean') throw bad('must be true or false');
      return v;
    case 'DATETIME':
      return datetime(v);
    case 'ADDRESS':
      return address(v);
    case 'FULL_NAME':
      return fullName(v);
  }
}
