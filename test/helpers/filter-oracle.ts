// An in-memory reading of docs/filtering.md, written from the document and not from the engine:
// which filters a listing refuses and which records the others keep, newest first. The model test
// (test/adversarial/filter-model.test.ts) compares the listings' pages and counts with it.
import { domainToASCII, domainToUnicode } from 'node:url';

export type ValueType =
  'TEXT' | 'FULL_NAME' | 'ADDRESS' | 'NUMBER' | 'DATETIME' | 'CHECKBOX' | 'SINGLE_SELECT' | 'MULTI_SELECT' | 'URL' | 'EMAIL' | 'TELEPHONE';

/** A record as the API shows it: its fields' values, and the ids each relationship holds. */
export interface ShownRecord {
  id: string;
  createdAt: string;
  fields: Record<string, unknown>;
  relationships: Record<string, string[]>;
}

export interface Option {
  id: string;
  label: string;
}

/** What the oracle knows of a listing's type: its fields' valueTypes and options, its relationships. */
export interface TypeModel {
  fields: Record<string, ValueType>;
  options: Record<string, Option[]>;
  /** Relationship keys, each with the type it links to and the slugs that name it. */
  relationships: Record<string, { target: string; slugs: string[] }>;
}

/** One query parameter of a filter: `key` or `key[op]` (op possibly `-op`), and its value. */
export interface SentFilter {
  key: string;
  op: string;
  value: string;
}

const OPS = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual', 'startsWith', 'contains'];
const RANGE = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'];
/** docs/filtering.md §Operators: the operators of each valueType, the first taken when none is given. */
const ALLOWED: Partial<Record<ValueType, string[]>> = {
  NUMBER: RANGE,
  DATETIME: RANGE,
  TEXT: ['equal', 'startsWith'],
  FULL_NAME: ['equal', 'startsWith'],
  ADDRESS: ['equal', 'startsWith'],
  CHECKBOX: ['equal'],
  SINGLE_SELECT: ['equal'],
  EMAIL: ['contains'],
  TELEPHONE: ['contains'],
  URL: ['contains'],
};

/** docs/filtering.md §Matching: NFKC, then lower case, then final sigma as sigma. */
export function fold(s: string): string {
  return s.normalize('NFKC').toLowerCase().replaceAll('ς', 'σ');
}

const labelKey = (s: string) => fold(s).replace(/\s+/gu, ' ').trim();

/** The texts a field's value is matched as (docs/filtering.md §Matching), folded. */
function texts(vt: ValueType, v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (vt === 'FULL_NAME') {
    const o = v as { firstName?: string; lastName?: string };
    const parts = [o.firstName, o.lastName].filter((x) => typeof x === 'string' && x !== '');
    return parts.length > 0 ? [fold(parts.join(' '))] : [];
  }
  if (vt === 'ADDRESS') {
    const o = v as Record<string, unknown>;
    return ['street', 'street2', 'city', 'state', 'postalCode', 'country'].flatMap((k) => (typeof o[k] === 'string' ? [fold(o[k])] : []));
  }
  const all = Array.isArray(v) ? (v as string[]) : [v as string];
  if (vt === 'EMAIL') return all.flatMap(emailSpellings);
  return all.map(fold);
}

/** An address in both spellings of its domain (docs/records.md §E-mail addresses), folded. */
function emailSpellings(address: string): string[] {
  const at = address.lastIndexOf('@');
  const local = fold(address.slice(0, at));
  const ascii = domainToASCII(address.slice(at + 1)).toLowerCase();
  const out = [`${local}@${ascii}`];
  if (ascii.split('.').some((l) => l.startsWith('xn--'))) out.push(`${local}@${fold(domainToUnicode(ascii))}`);
  return out;
}

function numbers(vt: ValueType, v: unknown): number[] {
  if (v === null || v === undefined) return [];
  if (vt === 'DATETIME') return [Date.parse(v as string)];
  if (vt === 'CHECKBOX') return [v ? 1 : 0];
  return [v as number];
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i;

type Test = (r: ShownRecord) => boolean;
/** The records a filter keeps, or the reason it is refused. */
export type Judged = { refused: string } | { test: Test };

/** One filter as docs/filtering.md reads it on a listing of `type`. */
export function judge(type: TypeModel, f: SentFilter): Judged {
  const negate = f.op.startsWith('-');
  const op = negate ? f.op.slice(1) : f.op;
  if (f.op !== '' && !OPS.includes(op)) return { refused: 'unknown operator' };
  if (f.value.includes('\u0000')) return { refused: 'NUL' };
  const positive = judgePositive(type, f.key, op, f.value);
  if ('refused' in positive) return positive;
  return negate ? { test: (r) => !positive.test(r) } : positive;
}

function judgePositive(type: TypeModel, key: string, op: string, raw: string): Judged {
  const vt = type.fields[key];
  if (vt === undefined) return relationship(type, key, op, raw);
  const allowed = ALLOWED[vt];
  if (!allowed) return { refused: `${vt} is not filterable` };
  const o = op === '' ? allowed[0]! : op;
  if (!allowed.includes(o)) return { refused: `${vt} takes no ${o}` };
  if (raw === '' && o !== 'startsWith') return { refused: 'empty value' };
  const field = (r: ShownRecord) => r.fields[key];
  switch (vt) {
    case 'NUMBER':
    case 'DATETIME': {
      let n: number;
      if (vt === 'NUMBER') {
        if (!DECIMAL.test(raw)) return { refused: 'not a decimal number' };
        n = Number(raw);
      } else {
        const s = raw.replace(/ (\d{2}:\d{2})$/, '+$1');
        if (!ISO_ZONED.test(s)) return { refused: 'not a zoned date-time' };
        n = Date.parse(s);
      }
      if (!Number.isFinite(n)) return { refused: 'not a value' };
      const cmp: Record<string, (x: number) => boolean> = {
        equal: (x) => x === n,
        greaterThan: (x) => x > n,
        greaterThanOrEqual: (x) => x >= n,
        lessThan: (x) => x < n,
        lessThanOrEqual: (x) => x <= n,
      };
      return { test: (r) => numbers(vt, field(r)).some(cmp[o]!) };
    }
    case 'CHECKBOX':
      if (raw !== 'true' && raw !== 'false') return { refused: 'not a boolean' };
      return { test: (r) => numbers(vt, field(r)).includes(raw === 'true' ? 1 : 0) };
    case 'SINGLE_SELECT': {
      const options = type.options[key] ?? [];
      const exact = options.find((x) => x.id === raw) ?? options.find((x) => x.label === raw);
      const loose = options.filter((x) => labelKey(x.label) === labelKey(raw));
      const option = exact ?? (loose.length === 1 ? loose[0] : undefined);
      if (!option) return { refused: 'no such option' };
      return { test: (r) => field(r) === option.id };
    }
    default: {
      if (raw === '') return { test: (r) => texts(vt, field(r)).some((t) => t !== '') };
      // A TELEPHONE needle of digits and separators loses the separators (§Matching).
      const written = vt === 'TELEPHONE' && /^[\d\s().+-]+$/.test(raw) && /\d/.test(raw) ? raw.replace(/[\s().-]/g, '') : raw;
      const needle = fold(written);
      const rootedEnd = needle.length > 1 && needle.endsWith('.') && !/\s/u.test(needle) ? needle.slice(0, -1) : null;
      const match: Record<string, (t: string) => boolean> = {
        equal: (t) => t === needle,
        startsWith: (t) => t.startsWith(needle),
        // An address is also matched as written with its domain's final dot (§Matching).
        contains: (t) => t.includes(needle) || (vt === 'EMAIL' && rootedEnd !== null && t.endsWith(rootedEnd)),
      };
      return { test: (r) => texts(vt, field(r)).some(match[o]!) };
    }
  }
}

function relationship(type: TypeModel, key: string, op: string, id: string): Judged {
  const rel = Object.entries(type.relationships).find(([k, x]) => k === key || x.slugs.includes(key));
  if (!rel) return { refused: `no field or relationship ${key}` };
  if (op !== '' && op !== 'equal' && op !== 'contains') return { refused: 'a relationship takes equal or contains' };
  if (id === '') return { refused: 'empty value' };
  const [name] = rel;
  return { test: (r) => (r.relationships[name] ?? []).includes(id) };
}

/** Newest first by createdAt, ties by id, the larger first (docs/filtering.md). */
export function newestFirst(a: ShownRecord, b: ShownRecord): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * What a listing of `records` answers for `filters` and a page: refused (with the keys that may be
 * named), or the page's ids and the count of every match.
 */
export function expected(
  type: TypeModel,
  records: readonly ShownRecord[],
  filters: readonly SentFilter[],
  page: { limit: number; offset: number },
): { refused: string[] } | { ids: string[]; totalCount: number } {
  const judged = filters.map((f) => ({ f, j: judge(type, f) }));
  const refused = judged.filter((x) => 'refused' in x.j).map((x) => paramOf(x.f));
  if (refused.length > 0) return { refused };
  const tests = judged.map((x) => (x.j as { test: Test }).test);
  const matches = records.filter((r) => tests.every((t) => t(r))).sort(newestFirst);
  return { ids: matches.slice(page.offset, page.offset + page.limit).map((r) => r.id), totalCount: matches.length };
}

/** The query key a filter is sent as. */
export function paramOf(f: SentFilter): string {
  return f.op === '' ? f.key : `${f.key}[${f.op}]`;
}
