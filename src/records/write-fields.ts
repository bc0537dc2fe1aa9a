// Field values of a create or update, checked against the type's definitions (docs/records.md
// §Writing fields). Keys are checked before values (unknown_field, read_only_field first), values
// before anything that needs the database (uniqueness, ids). Every error names its `param`.
import { optionNamed } from '../definitions/labels.ts';
import type { FieldDef, TypeDefinitions } from '../definitions/service.ts';
import { blank } from '../lib/chars.ts';
import { AppError, InputError } from '../lib/errors.ts';
import { shownLiteral } from '../lib/json-numbers.ts';
import type { ValueType } from '../lib/resource-schemas.ts';
import { checkValue } from './values.ts';

/** A type's name after its indefinite article, for messages: "an account", "a contact". */
export function withArticle(objectType: string): string {
  return `${/^[aeiou]/i.test(objectType) ? 'an' : 'a'} ${objectType}`;
}

/** The JSON type a value of each valueType must have; a wrong one is invalid_type, never coerced. */
const JSON_TYPE: Record<ValueType, 'string' | 'number' | 'boolean' | 'array' | 'object'> = {
  TEXT: 'string',
  MARKDOWN: 'string',
  EMAIL: 'string',
  URL: 'string',
  TELEPHONE: 'string',
  SOCIAL_HANDLE: 'string',
  DATETIME: 'string',
  SINGLE_SELECT: 'string',
  MULTI_SELECT: 'array',
  NUMBER: 'number',
  CURRENCY: 'number',
  CHECKBOX: 'boolean',
  ADDRESS: 'object',
  FULL_NAME: 'object',
};

const PART_TYPES: Partial<Record<ValueType, Record<string, 'string' | 'number'>>> = {
  ADDRESS: {
    street: 'string',
    street2: 'string',
    city: 'string',
    state: 'string',
    postalCode: 'string',
    country: 'string',
    latitude: 'number',
    longitude: 'number',
  },
  FULL_NAME: { firstName: 'string', lastName: 'string' },
};

/** The members of a value type's object (`firstName` of a FULL_NAME) and their JSON types; none for the others. */
export function valueMembers(type: ValueType): Readonly<Record<string, 'string' | 'number'>> {
  return PART_TYPES[type] ?? {};
}

/** The most values one array of a field holds (docs/records.md §Writing fields). */
export const MAX_VALUES = 1000;

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  return v === null ? 'null' : typeof v;
}

function wrongType(param: string, expected: string): AppError {
  return new AppError('invalid_type', `"${param}" must be ${expected}.`, { param });
}

/** Checks the JSON shape of one value (parts of objects, elements of arrays) without judging content. */
function checkShape(def: FieldDef, v: unknown, param: string): void {
  const expected = JSON_TYPE[def.valueType];
  if (def.multipleValues || expected === 'array') {
    if (!Array.isArray(v)) throw wrongType(param, 'an array of strings');
    if (v.length > MAX_VALUES) throw new AppError('invalid_value', `"${param}" holds at most ${MAX_VALUES} values.`, { param });
    v.forEach((x, i) => {
      if (typeof x !== 'string') throw wrongType(`${param}[${i}]`, 'a string');
    });
    return;
  }
  if (jsonType(v) !== expected) throw wrongType(param, `of type ${expected}`);
  const parts = PART_TYPES[def.valueType];
  if (!parts) return;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const at = `${param}.${k}`;
    const t = Object.hasOwn(parts, k) ? parts[k] : undefined;
    if (!t) throw new AppError('unknown_field', `"${at}" is not a member of ${def.valueType}; known: ${Object.keys(parts).join(', ')}.`, { param: at });
    if (x !== null && typeof x !== t) throw wrongType(at, `a ${t} or null`);
  }
}

/**
 * How a select value's label names its option: `exact` (the API's writes, docs/records.md
 * §Writing fields), or `loose`, also ignoring case and runs of white space as select filters do
 * (`optionNamed`; an import, docs/import.md §Value types).
 */
export type LabelMatch = 'exact' | 'loose';

/** The option id a select value names (by id, or by label as `labels` says); undefined when it names none. */
function optionId(def: FieldDef, v: string, labels: LabelMatch): string | undefined {
  const options = def.options ?? [];
  const byId = options.find((o) => o.id === v);
  if (byId) return byId.id;
  return (labels === 'loose' ? optionNamed(options, v) : options.find((o) => o.label === v))?.id;
}

/** One value's content (its field's rules: default country, handle service), errors as invalid_value at `at`. */
function checkOne(def: FieldDef, x: unknown, at: string): unknown {
  try {
    return checkValue(def.valueType, x, def);
  } catch (err) {
    if (err instanceof InputError) throw new AppError('invalid_value', `"${at}${err.param ?? ''}" ${err.message}.`, { param: `${at}${err.param ?? ''}` });
    throw err;
  }
}

function checkContent(def: FieldDef, v: unknown, param: string, labels: LabelMatch): unknown {
  if (def.valueType === 'SINGLE_SELECT' || def.valueType === 'MULTI_SELECT') {
    const values = Array.isArray(v) ? (v as string[]) : [v as string];
    const ids = values.map((x, i) => {
      const at = Array.isArray(v) ? `${param}[${i}]` : param;
      const id = optionId(def, x, labels);
      if (!id) throw new AppError('invalid_value', `"${shownLiteral(x)}" is neither an option id nor the label of an option of ${def.key}.`, { param: at });
      return id;
    });
    // The second naming of an option is the bad element, as for the other multi-valued fields.
    const again = ids.findIndex((id, i) => ids.indexOf(id) !== i);
    if (again >= 0) throw new AppError('invalid_value', `"${param}" names the same option twice.`, { param: `${param}[${again}]` });
    return Array.isArray(v) ? ids : ids[0];
  }
  if (def.multipleValues) {
    const out = (v as string[]).map((x, i) => checkOne(def, x, `${param}[${i}]`) as string);
    const seen = new Set<string>();
    out.forEach((x, i) => {
      if (seen.has(x)) throw new AppError('invalid_value', `"${x}" appears twice in "${param}".`, { param: `${param}[${i}]` });
      seen.add(x);
    });
    return out;
  }
  const out = checkOne(def, v, param);
  if (def.values && !def.values.includes(out as string)) throw new AppError('invalid_value', `"${param}" must be one of ${def.values.join(', ')}.`, { param });
  return out;
}

/**
 * The keys of `fields`: unknown and read-only keys. `at` is the member the errors name (`fields`;
 * a merge's `fieldResolutions`, docs/merge.md §Fields).
 */
export function checkFieldKeys(defs: TypeDefinitions, raw: Record<string, unknown>, at = 'fields'): void {
  for (const key of Object.keys(raw)) {
    const def = defs.fields.get(key);
    const param = `${at}.${key}`;
    if (!def) throw new AppError('unknown_field', `"${key}" is not a field of ${defs.objectType}.`, { param });
    if (def.readOnly) throw new AppError('read_only_field', `"${key}" is read-only.`, { param });
  }
}

/**
 * The required fields a create's `fields` leaves out (or sends as null), checked after the keys of
 * both maps (docs/records.md §Order of checks): a key that is there is named before one that is not.
 */
export function checkRequiredFields(defs: TypeDefinitions, raw: Record<string, unknown>): void {
  for (const def of defs.fields.values()) {
    if (def.required && (!Object.hasOwn(raw, def.key) || raw[def.key] === null))
      throw new AppError('parameter_missing', `"${def.key}" is required to create ${withArticle(defs.objectType)}.`, { param: `fields.${def.key}` });
  }
}

/**
 * Whether the record a write changes holds a field, which a `null` for a required field then
 * cannot clear (docs/records.md §Writing fields). An update reads its stored fields
 * (`heldIn`); an import line replaces a record's fields whole and does not insist on required
 * ones, so it holds none (`holdsNone`). A create refuses a null required field before
 * (checkRequiredFields); a writer that says nothing refuses every one.
 */
export type Holds = (key: string) => boolean;

/** A record's stored fields as a `Holds`: a field is held when it is set (not null). */
export function heldIn(stored: Readonly<Record<string, unknown>>): Holds {
  return (key) => Object.hasOwn(stored, key) && stored[key] !== null;
}

export const holdsNone: Holds = () => false;

/**
 * The values of `fields` (keys already checked): each value's JSON type, then its content.
 * Returns the normalized values by key, null for a cleared field; select values as option ids.
 * `at` is the member the errors name, as in `checkFieldKeys`. A `null` for a required field that
 * the record does not hold (`holds`) changes nothing and is taken, as a value equal to the stored
 * one is; for one it holds it is refused.
 */
export function checkFieldValues(
  defs: TypeDefinitions,
  raw: Record<string, unknown>,
  at = 'fields',
  labels: LabelMatch = 'exact',
  holds: Holds = () => true,
): Map<string, unknown> {
  const values = new Map<string, unknown>();
  for (const [key, v] of Object.entries(raw)) {
    const def = defs.fields.get(key) as FieldDef;
    const param = `${at}.${key}`;
    if (v === null) {
      if (def.required && holds(key)) throw new AppError('invalid_value', `"${key}" is required and cannot be cleared.`, { param });
      values.set(key, null);
      continue;
    }
    // A multi-valued field also takes one string: a list of one (docs/records.md §Writing fields).
    if (def.multipleValues && typeof v === 'string') {
      values.set(key, [checkOne(def, v, param)]);
      continue;
    }
    checkShape(def, v, param);
    const value = checkContent(def, v, param, labels);
    // A required text (a name, a title) that shows nothing (white space, invisible characters) is as good as none.
    if (def.required && typeof value === 'string' && blank(value)) throw new AppError('invalid_value', `"${key}" is required and cannot be blank.`, { param });
    values.set(key, value);
  }
  return values;
}
