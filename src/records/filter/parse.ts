// The filters of a record listing, read from its query string (docs/filtering.md): each key
// besides limit and offset is `<key>` or `<key>[<op>]` (op possibly negated with `-`), checked
// against the type's definitions. Anything that is not a filter this type allows is refused with
// invalid_parameter naming the query key; nothing of a key or value reaches SQL except as a bound
// value.
import type { FieldDef, OptionDef, RelationshipDef, TypeDefinitions } from '../../definitions/service.ts';
import { AppError } from '../../lib/errors.ts';
import { parseIsoDateTime } from '../../lib/dates.ts';
import { foldText, INDEXED_TEXT_BYTES, labelKey } from '../../lib/fold.ts';
import { unheldNumber } from '../../lib/json-numbers.ts';
import { phoneNeedle } from '../../lib/phone.ts';
import { isServiceUrl, profileUrl } from '../social.ts';
import { longerThan } from '../../lib/chars.ts';
import { FIELD_OPERATORS, OPERATORS, type Operator, RELATIONSHIP_OPERATORS } from './operators.ts';

export type { Operator };

interface Base {
  /** The query key, as the caller wrote it (`$name[startsWith]`). */
  param: string;
  negate: boolean;
}
/**
 * A field compared through value_text (folded text, option ids). `set`: the field holds a
 * non-empty text (`startsWith` with an empty value).
 */
export interface TextFilter extends Base {
  kind: 'text';
  field: string;
  op: 'equal' | 'startsWith' | 'contains' | 'set';
  value: string;
}
/** A field compared through value_num (numbers, currencies, checkboxes, DATETIME as ms). */
export interface NumFilter extends Base {
  kind: 'num';
  field: string;
  op: 'equal' | 'greaterThan' | 'greaterThanOrEqual' | 'lessThan' | 'lessThanOrEqual';
  value: number;
}
/** A relationship that holds (or, negated, does not hold) one id. */
export interface RelationshipFilter extends Base {
  kind: 'relationship';
  relationship: RelationshipDef;
  id: string;
}
export type Filter = TextFilter | NumFilter | RelationshipFilter;

/** Limits that keep a hostile query string cheap to refuse (docs/filtering.md §Limits). */
export const MAX_FILTERS = 20;
export const MAX_VALUE_LENGTH = 1000;
const MAX_KEY_LENGTH = 200;

const KEY = /^([^[\]]+)(?:\[(-?)([^[\]]*)\])?$/;
// A decimal number, with an exponent as JSON writes one (the API answers 1e-7 and 1e+21 so).
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

function bad(param: string, why: string): AppError {
  // Cut at a character, never inside a surrogate pair, so the message stays text UTF-8 can hold.
  const shown = param.length > 80 ? `${Array.from(param).slice(0, 80).join('')}…` : param;
  return new AppError('invalid_parameter', `Invalid filter "${shown}": ${why}.`, { param });
}

/**
 * The filters of `query` (every query key besides limit and offset; a repeated key arrives as an
 * array of values). Throws invalid_parameter with `param` = the offending key.
 */
export function parseFilters(query: Readonly<Record<string, unknown>>, defs: TypeDefinitions): Filter[] {
  const out: Filter[] = [];
  for (const param of Object.keys(query)) {
    if (param === 'limit' || param === 'offset') continue;
    const raw = query[param];
    const values = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    if (out.length + values.length > MAX_FILTERS) throw bad(param, `at most ${MAX_FILTERS} filters may be combined`);
    const m = param.length <= MAX_KEY_LENGTH ? KEY.exec(param) : null;
    if (!m) throw bad(param, 'a filter is written key or key[operator]');
    const [, key = '', minus, opText] = m;
    const field = defs.fields.get(key);
    const rel = field ? undefined : relationshipOf(defs, key);
    if (!field && !rel) throw bad(param, `${defs.objectType} has no field or relationship "${key}"`);
    if (opText !== undefined && !(OPERATORS as readonly string[]).includes(opText)) throw bad(param, `unknown operator; use one of ${OPERATORS.join(', ')}`);
    const negate = minus === '-';
    for (const v of values) {
      if (typeof v !== 'string') throw bad(param, 'the value must be text');
      // An empty `startsWith` asks whether the field holds a non-empty text; any other empty value is refused.
      if (v === '' && !(field && opText === 'startsWith')) throw bad(param, 'the value is empty');
      if (v.includes('\u0000')) throw bad(param, 'the value contains a NUL character');
      if (longerThan(v, MAX_VALUE_LENGTH)) throw bad(param, `the value is longer than ${MAX_VALUE_LENGTH} characters`);
      out.push(field ? fieldFilter(param, field, opText as Operator | undefined, negate, v) : relationshipFilter(param, rel!, opText, negate, v));
    }
  }
  return out;
}

/**
 * The relationship a filter key names (docs/filtering.md §Relationships): its key (`$account`), or
 * the link's slug `$<type>-<type>` naming this type and the other one in either order
 * (`$task-account` on tasks is `$account`, on accounts `$task`); a custom relationship's slug is
 * `$<objectType>-<key>`. Type slugs and custom keys hold no `-`, so the first one splits the slug.
 */
function relationshipOf(defs: TypeDefinitions, key: string): RelationshipDef | undefined {
  const direct = defs.relationships.get(key);
  if (direct) return direct;
  const m = /^\$([^-]+)-(.+)$/.exec(key);
  if (!m) return undefined;
  const [, a = '', b = ''] = m;
  const t = defs.objectType;
  if (a === t) return defs.relationships.get(`$${b}`) ?? (b.startsWith('$') ? undefined : defs.relationships.get(b));
  if (b === t) return defs.relationships.get(`$${a}`);
  return undefined;
}

function relationshipFilter(param: string, rel: RelationshipDef, op: string | undefined, negate: boolean, id: string): RelationshipFilter {
  if (op !== undefined && !(RELATIONSHIP_OPERATORS as readonly string[]).includes(op))
    throw bad(param, `a relationship is filtered with ${RELATIONSHIP_OPERATORS.join(' or ')}`);
  if (rel.storage.kind === 'derived') throw bad(param, `the relationship ${rel.key} cannot be filtered`);
  return { kind: 'relationship', param, negate, relationship: rel, id };
}

function fieldFilter(param: string, field: FieldDef, given: Operator | undefined, negate: boolean, v: string): Filter {
  const allowed = FIELD_OPERATORS[field.valueType];
  if (!allowed) throw bad(param, `${field.valueType} fields cannot be filtered`);
  const op = given ?? allowed[0]!;
  if (!allowed.includes(op)) throw bad(param, `${field.valueType} fields take ${allowed.join(', ')}`);
  const base = { param, negate, field: field.key };
  switch (field.valueType) {
    case 'NUMBER':
    case 'CURRENCY': {
      // A `+` in a query string decodes to a space: an unencoded sign or exponent sign is still +.
      const d = v.replace(/^ (?=[\d.])/, '+').replace(/(\de) (?=\d+$)/i, '$1+');
      const n = Number(d);
      if (!DECIMAL.test(d) || !Number.isFinite(n)) throw bad(param, 'the value must be a decimal number');
      // An integer the double does not hold would match other records than the one asked for
      // (docs/errors.md §Numbers in bodies): refused as a body's number is.
      const unheld = unheldNumber(d, n);
      if (unheld !== null) throw bad(param, `the value ${unheld}`);
      return { ...base, kind: 'num', op: op as NumFilter['op'], value: n };
    }
    case 'DATETIME': {
      // A `+` in a query string decodes to a space; an offset written unencoded is still meant as +.
      const s = v.replace(/ (\d{2}:\d{2})$/, '+$1');
      const ms = parseIsoDateTime(s);
      if (Number.isNaN(ms)) throw bad(param, 'the value must be an ISO 8601 date-time with a time zone naming a real date and time');
      return { ...base, kind: 'num', op: op as NumFilter['op'], value: ms };
    }
    case 'CHECKBOX':
      if (v !== 'true' && v !== 'false') throw bad(param, 'the value must be true or false');
      return { ...base, kind: 'num', op: 'equal', value: v === 'true' ? 1 : 0 };
    case 'SINGLE_SELECT': {
      const option = selectOption(field, v);
      if (option === 'ambiguous') throw bad(param, 'the value is the label of several options; use an option id');
      if (!option) throw bad(param, 'the value must be an option id or the label of an option');
      return { ...base, kind: 'text', op: 'equal', value: foldText(option.id) };
    }
    default: {
      if (v === '') return { ...base, kind: 'text', op: 'set', value: '' };
      const value = foldText(asStored(field, op, v));
      if (value === '') throw bad(param, 'the value is empty');
      // Exact against the value index only below its bound (src/lib/fold.ts).
      if (Buffer.byteLength(value) > INDEXED_TEXT_BYTES - 4) throw bad(param, `the value is longer than ${INDEXED_TEXT_BYTES - 4} bytes in UTF-8`);
      return { ...base, kind: 'text', op: op as TextFilter['op'], value };
    }
  }
}

/**
 * The option a select filter value names: an id, an exact label, else the one label equal to it
 * ignoring case and runs of white space (`closed  won` names `Closed won`); `ambiguous` when
 * several labels are.
 */
function selectOption(field: FieldDef, v: string): OptionDef | 'ambiguous' | undefined {
  const options = field.options ?? [];
  const exact = options.find((o) => o.id === v) ?? options.find((o) => o.label === v);
  if (exact) return exact;
  const k = labelKey(v);
  const loose = options.filter((o) => labelKey(o.label) === k);
  return loose.length > 1 ? 'ambiguous' : loose[0];
}

/**
 * A TELEPHONE or SOCIAL_HANDLE filter value in the form its field stores (docs/filtering.md
 * §Matching): a number as E.164 (a part of one without separators); for `equal`, a handle or
 * profile URL as the profile URL; for `startsWith`, a URL on the service with the profile URL's
 * scheme and host. Anything else is compared as written.
 */
function asStored(field: FieldDef, op: Operator, v: string): string {
  if (field.valueType === 'TELEPHONE') return phoneNeedle(v, field.defaultCountry ?? null);
  if (field.valueType !== 'SOCIAL_HANDLE' || !field.handleService) return v;
  if (op === 'startsWith' && !isServiceUrl(v, field.handleService)) return v;
  return profileUrl(v, field.handleService) ?? v;
}
