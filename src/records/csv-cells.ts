// The value of one CSV cell for a field (docs/import.md §CSV): typed by the field's definition.
// Lists (a multi-valued field, MULTI_SELECT) are separated by `;`; select cells name option labels
// (an unknown one is refused with the valid labels); a FULL_NAME cell is split at its first run of
// spaces; an ADDRESS is given as columns `<field>.<member>` or as a JSON object. The API's error
// of a value is told in the words of the cell.
import { optionNamed } from '../definitions/labels.ts';
import type { FieldDef } from '../definitions/service.ts';
import { labelKey } from '../lib/fold.ts';
import { AppError, InputError } from '../lib/errors.ts';
import { ImportError } from '../import/kind.ts';
import { shownLiteral, unheldNumber } from '../lib/json-numbers.ts';

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

/** A decimal number, as JSON writes one with an optional `+`: `Number`'s hex (`0x10`), binary and octal forms are refused. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** The number a NUMBER or CURRENCY cell, or a number member of an ADDRESS, writes in decimal. */
export function decimal(cell: string): number {
  const n = DECIMAL.test(cell) ? Number(cell) : NaN;
  // A number beyond a double's range, or an integer the double does not hold, is refused with
  // that reason, never stored as another (docs/errors.md §Numbers in bodies).
  const unheld = Number.isNaN(n) ? null : unheldNumber(cell, n);
  if (unheld !== null) throw new InputError(`"${shownLiteral(cell)}" ${unheld}`);
  if (Number.isFinite(n)) return n;
  // What a spreadsheet's formatting adds to a number is named, so the message says what to remove:
  // a currency sign (`$1,000.00`, `100 €`) and thousands separators (`1,000`, `1.234,56`).
  const bare = cell.replace(/\s*\p{Sc}\s*/gu, '');
  const extras = [
    ...(bare !== cell ? ['a currency sign'] : []),
    ...(/^[+-]?\d{1,3}(?:(?:[,' ]\d{3})+(?:\.\d+)?|(?:[.' ]\d{3})+(?:,\d+)?)$/.test(bare) ? ['thousands separators'] : []),
  ];
  const without = extras.length > 0 ? `, without ${extras.join(' or ')}` : '';
  throw new InputError(`"${shownLiteral(cell)}" is not a number: write it in decimal digits, with "." before a fraction${without}`);
}

/** The label of the option a cell names: exact, else ignoring case and runs of white space (`optionNamed`). */
function option(def: FieldDef, label: string): string {
  const options = def.options ?? [];
  const named = optionNamed(options, label);
  if (named) return named.label;
  const valid = options.map((o) => o.label).join(', ');
  throw new InputError(`"${shownLiteral(label)}" is not an option of ${def.label}; valid labels: ${valid || '(none)'}`);
}

function scalar(def: FieldDef, cell: string): unknown {
  switch (def.valueType) {
    case 'NUMBER':
    case 'CURRENCY':
      return decimal(cell);
    case 'CHECKBOX': {
      const c = cell.toLowerCase();
      if (TRUE.has(c)) return true;
      if (FALSE.has(c)) return false;
      throw new InputError(`"${shownLiteral(cell)}" is not a checkbox value (true, false, yes, no, 1, 0)`);
    }
    case 'SINGLE_SELECT':
    case 'MULTI_SELECT':
      return option(def, cell);
    case 'FULL_NAME': {
      // One comma is the "Last, First" form address books export (`Lee, Ann`, `van der Berg,
      // Jan`), unless what follows it is a suffix (`John Smith, Jr.`): a first name holds no
      // comma, so the split at the first space would cut a last name of several words in two.
      const inverted = /^([^,]*\S)\s*,\s*(\S[^,]*)$/.exec(cell);
      if (inverted && !SUFFIX.test(inverted[2]!)) return { firstName: inverted[2], lastName: inverted[1] };
      const m = /^(\S+)\s+(.+)$/.exec(cell);
      return m ? { firstName: m[1], lastName: m[2] } : { firstName: cell };
    }
    case 'ADDRESS':
      if (!cell.startsWith('{')) throw new InputError(`an address is given as columns ${def.key}.street, ${def.key}.city, … or as a JSON object`);
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        throw new InputError('is not a JSON object');
      }
    default:
      return cell;
  }
}

/** What follows the comma of `John Smith, Jr.`: a generation or a degree, never a first name. */
const SUFFIX = /^(jr|sr|ii|iii|iv|phd|md|esq)\.?$/i;

/**
 * The `;` between the values of a list. A telephone number's extension is written `;ext=N`, as the
 * API stores it (docs/records.md §Telephone numbers): that `;` belongs to its number.
 */
const SEPARATOR = /;/;
const TELEPHONE_SEPARATOR = /;(?!\s*ext\s*=)/i;

/**
 * The labels of a MULTI_SELECT cell. An option's label may hold `;` itself: pieces that together
 * make a label are that option, the longest run first, so every option can be named.
 */
function optionLabels(def: FieldDef, cell: string): string[] {
  const pieces = cell.split(';');
  const labels = new Set((def.options ?? []).map((o) => labelKey(o.label)));
  const out: string[] = [];
  for (let i = 0; i < pieces.length;) {
    let end = pieces.length;
    while (end > i + 1 && !labels.has(labelKey(pieces.slice(i, end).join(';')))) end--;
    out.push(pieces.slice(i, end).join(';').trim());
    i = end;
  }
  return out;
}

export function cellValue(def: FieldDef, cell: string): unknown {
  if (def.valueType === 'MULTI_SELECT')
    return optionLabels(def, cell)
      .filter((s) => s !== '')
      .map((s) => option(def, s));
  if (def.multipleValues) {
    return cell
      .split(def.valueType === 'TELEPHONE' ? TELEPHONE_SEPARATOR : SEPARATOR)
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => scalar(def, s));
  }
  return scalar(def, cell);
}

/** The piece of a row's value that an error's path names: a member of an object, an element of a list. */
function valueAt(value: unknown, member: string | undefined, index: string | undefined): unknown {
  let v = value;
  if (member !== undefined) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[member] : undefined;
  if (index !== undefined) v = Array.isArray(v) ? (v as unknown[])[Number(index)] : undefined;
  return v;
}

/**
 * An API error of a cell's value in the words of the file (docs/import.md §CSV): the row has no
 * JSON path, so the value's path that the message opens with (`"fields.$email[1]" must be …`)
 * becomes the piece of the cell it names, shown by its ends when long (or, for a member the value
 * has no place for, that member's name), and the field's path elsewhere (`appears twice in
 * "fields.$email"`) becomes the cell.
 */
function cellMessage(err: AppError, key: string, member: string | undefined, value: unknown): string {
  const path = `"${err.param ?? ''}" `;
  const piece = err.code === 'unknown_field' ? member : value;
  const shown = typeof piece === 'string' || typeof piece === 'number' ? `"${shownLiteral(String(piece))}" ` : undefined;
  const message = shown !== undefined && err.message.startsWith(path) ? shown + err.message.slice(path.length) : err.message;
  return message.replaceAll(`"fields.${key}"`, 'the cell');
}

/** The error of a field's value as the API checks it, placed at its cell: its column, and the piece of the cell it names. */
export function fieldError(
  err: AppError,
  line: number,
  at: Map<string, string>,
  fields: Record<string, { value: unknown }>,
): { header: string; error: ImportError } {
  const [, key = '', member, index] = /^fields\.([^.[]+)(?:\.([^.[]+))?(?:\[(\d+)\])?/.exec(err.param ?? '') ?? [];
  const header = (member !== undefined ? at.get(`${key}.${member}`) : undefined) ?? at.get(key) ?? key;
  return { header, error: new ImportError(line, header, cellMessage(err, key, member, valueAt(fields[key]?.value, member, index))) };
}
