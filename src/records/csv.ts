// CSV import of one record type (docs/import.md §CSV): each row becomes the import line of one
// record. The header names fields and relationships by key or label; cells are typed by the
// field's definition; select cells name option labels; relationship cells name externalIds. Every
// row is checked against the workspace's definitions as it is read, so that every bad row is
// reported with its line and column before anything is written. Parsed by csv-parse, streaming.
import { open } from 'node:fs/promises';
import { loadDefinitions, type FieldDef, type RelationshipDef, type TypeDefinitions } from '../definitions/service.ts';
import { RESERVED_TYPES } from '../definitions/object-types.ts';
import { RECORD_TYPES } from './resource.ts';
import { binaryError } from '../import/binary.ts';
import { checkExternalId, ImportError } from '../import/kind.ts';
import { utf8File } from '../import/utf8.ts';
import type { ImportSource, SourceObject } from '../import/source.ts';
import type { Ctx } from '../lib/context.ts';
import { AppError, InputError } from '../lib/errors.ts';
import { shownLiteral } from '../lib/json-numbers.ts';
import { cellValue, decimal, fieldError } from './csv-cells.ts';
import { csvRows, foreignSeparator } from './csv-rows.ts';
import { checkFieldValues, valueMembers } from './write-fields.ts';

/** The bytes of the file's start in which a header's separator is looked for. */
const HEADER_BYTES = 64 * 1024;

type Column = { kind: 'externalId' } | { kind: 'field'; def: FieldDef; member?: string } | { kind: 'relationship'; def: RelationshipDef };

const fold = (s: string) => s.trim().toLowerCase();

const REPEATED_HEADER = 'repeats the header: a file has one header, so remove this row (files joined one after the other keep the first header only)';

/** A header's name compared without case, spaces, `_` or `-` ("First Name", "first_name" → "firstname"). */
const loose = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, '');

/** The member of `def`'s value that `name` names, compared loosely ("First Name" → firstName). */
function memberOf(def: FieldDef, name: string): string | undefined {
  return Object.keys(valueMembers(def.valueType)).find((m) => loose(m) === loose(name));
}

/** What a header cell names, or an InputError listing what it may name. */
function column(defs: TypeDefinitions, header: string): Column {
  const h = header.trim();
  // The externalId is named loosely (`External ID`, `external_id`, `ExternalID`), as a member is;
  // a field or relationship whose key is such a name (`external_id`) keeps it (docs/import.md §CSV).
  if (loose(h) === 'externalid' && !defs.fields.has(h) && !defs.relationships.has(h)) return { kind: 'externalId' };
  // A key names its definition; a label (or a key in another case) must name only one of the
  // fields and the relationships stored on the type, or the column would fill one of them silently.
  const find = (name: string): FieldDef | RelationshipDef | undefined => {
    const exact = defs.fields.get(name) ?? defs.relationships.get(name);
    if (exact) return exact;
    const named = (d: FieldDef | RelationshipDef) => fold(d.label) === fold(name) || fold(d.key) === fold(name);
    const rels = [...defs.relationships.values()];
    const all = [...defs.fields.values(), ...rels.filter((r) => r.storage.kind === 'own')].filter(named);
    if (all.length > 1)
      throw new InputError(`names several fields or relationships: name one by its key, ${all.map((d) => `${d.key} (${d.label})`).join(' or ')}`, h);
    return all[0] ?? rels.find(named);
  };
  const isField = (d: FieldDef | RelationshipDef | undefined): d is FieldDef => d !== undefined && defs.fields.get(d.key) === d;
  const named = find(h);
  if (isField(named)) return { kind: 'field', def: named };
  const dot = h.lastIndexOf('.');
  const before = dot > 0 ? find(h.slice(0, dot)) : undefined;
  const parent = isField(before) ? before : undefined;
  const members = parent ? Object.keys(valueMembers(parent.valueType)) : [];
  if (parent && members.length > 0) {
    const member = memberOf(parent, h.slice(dot + 1));
    if (member === undefined)
      throw new InputError(`${parent.key} (${parent.valueType}) has no member "${shownLiteral(h.slice(dot + 1))}"; its members: ${members.join(', ')}`, h);
    return { kind: 'field', def: parent, member };
  }
  const rel = named;
  if (rel) {
    if (rel.storage.kind !== 'own') throw new InputError(`relationship ${rel.key} is not stored on ${defs.objectType}: import it from the other end`, h);
    return { kind: 'relationship', def: rel };
  }
  // A member named alone, as other CRMs export names and addresses ("First Name", "City"): the
  // member of the one field of the type whose value has it.
  const owners = [...defs.fields.values()].flatMap((def) => {
    const member = memberOf(def, h);
    return member === undefined ? [] : [{ kind: 'field' as const, def, member }];
  });
  if (owners.length === 1) return owners[0]!;
  if (owners.length > 1)
    throw new InputError(`names a member of several fields: name one, as ${owners.map((o) => `${o.def.label}.${o.member}`).join(' or ')}`, h);
  // An archived field is hidden from writes, and a row cannot hold its values (docs/import.md
  // §`account`, `contact`, `opportunity`): its column is refused saying so, as a line's `fields` is.
  const archived = [...defs.archived.values()].find((d) => d.key === h || fold(d.key) === fold(h) || fold(d.label) === fold(h));
  if (archived)
    throw new InputError(
      `names the archived field ${archived.key} (${archived.label}), whose values a CSV row cannot hold: rolodex definition unarchive brings it back, or an NDJSON line's archivedFields holds them`,
      h,
    );
  const fields = [...defs.fields.values()].map((d) => `${d.key} (${d.label})`).join(', ');
  const rels = [...defs.relationships.values()].filter((d) => d.storage.kind === 'own').map((d) => `${d.key} (${d.label})`);
  throw new InputError(
    `names no field or relationship of ${defs.objectType}; fields: ${fields}${rels.length ? `; relationships: ${rels.join(', ')}` : ''}; and externalId`,
    h,
  );
}

/**
 * The import line of one row, or the errors of its bad cells, every one with its column in the
 * order of the columns (docs/import.md §CSV); a row with too few or too many cells is one error.
 */
function rowObject(
  line: number,
  type: string,
  defs: TypeDefinitions,
  headers: string[],
  columns: Column[],
  cells: string[],
): { value: Record<string, unknown> } | { errors: ImportError[] } {
  if (cells.length !== headers.length)
    return { errors: [new ImportError(line, '(row)', `has ${cells.length} ${cells.length === 1 ? 'cell' : 'cells'}, the header ${headers.length}`)] };
  const system = Object.hasOwn(RECORD_TYPES, type);
  const fields: Record<string, { value: unknown }> = {};
  const relationships: Record<string, { values: string[] }> = {};
  const at = new Map<string, string>();
  // Each bad cell's error by its column's place; a field with a bad cell is not checked again.
  const bad: Array<{ place: number; error: ImportError }> = [];
  const badFields = new Set<string>();
  let externalId: string | undefined;
  for (let i = 0; i < columns.length; i++) {
    const col = columns[i] as Column;
    const header = headers[i] as string;
    const cell = (cells[i] as string).trim();
    if (cell === '') continue;
    try {
      if (col.kind === 'externalId') externalId = checkExternalId(cell, header);
      else if (col.kind === 'relationship') {
        const values = cell
          .split(';')
          .map((s) => s.trim())
          .filter((s) => s !== '');
        if (col.def.cardinality === 'has_one' && values.length > 1) throw new InputError('holds at most one externalId (has_one)', header);
        relationships[col.def.key] = { values };
      } else {
        const key = col.def.key;
        if (badFields.has(key)) continue;
        // A member's column is the place of the errors of that member (`fields.$primaryAddress.latitude`).
        at.set(col.member === undefined ? key : `${key}.${col.member}`, header);
        try {
          if (col.member !== undefined) {
            const obj = (fields[key]?.value ?? {}) as Record<string, unknown>;
            obj[col.member] = valueMembers(col.def.valueType)[col.member] === 'number' ? decimal(cell) : cell;
            fields[key] = { value: obj };
          } else fields[key] = { value: cellValue(col.def, cell) };
        } catch (err) {
          badFields.add(key);
          delete fields[key];
          throw err;
        }
      }
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      bad.push({ place: i, error: new ImportError(line, header, err.message) });
    }
  }
  if (externalId === undefined && !bad.some((b) => columns[b.place]?.kind === 'externalId'))
    bad.unshift({ place: -1, error: new ImportError(line, 'externalId', 'is required (a column named externalId)') });
  // The values as the API would check them, so that a bad cell is reported now, with its column:
  // all at once, and field by field only when one is bad, to report each bad one.
  const valuesOf = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, fields[k]?.value]));
  const keys = Object.keys(fields);
  try {
    checkFieldValues(defs, valuesOf(keys));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    for (const key of keys) {
      try {
        checkFieldValues(defs, valuesOf([key]));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const { header, error } = fieldError(err, line, at, fields);
        bad.push({ place: headers.indexOf(header), error });
      }
    }
  }
  if (bad.length > 0) return { errors: bad.sort((a, b) => a.place - b.place).map((b) => b.error) };
  return { value: { object: system ? type : 'record', ...(system ? {} : { objectType: type }), externalId, fields, relationships } };
}

/**
 * What each column of the header names, and a column naming what an earlier one names (the
 * externalId, a relationship, a field, or a member of a field the earlier one names whole or as
 * the same member): of two such cells one would be taken and the other dropped without a word, so
 * the header is refused, naming both columns.
 */
function headerColumns(defs: TypeDefinitions, headers: string[], line: number): { columns: Column[]; bad: ImportError[] } {
  const bad: ImportError[] = [];
  // What a column names ("the field $name", "the field $name.firstName") → the first column naming it.
  const first = new Map<string, string>();
  const columns = headers.map((h, i): Column => {
    // A column without a name (a header ending in a comma) is named by its place.
    if (h.trim() === '') {
      bad.push(new ImportError(line, `(column ${i + 1})`, 'has no name: name the field, relationship or externalId it holds, or remove the column'));
      return { kind: 'externalId' };
    }
    let col: Column;
    try {
      col = column(defs, h);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      // A name that names nothing may be anything (a binary file's first line, a cell of data):
      // it is shown by its ends, as a cell is, so that the report stays a line per error.
      bad.push(new ImportError(line, shownLiteral(err.param ?? h), err.message));
      return { kind: 'externalId' };
    }
    let what: string;
    let earlier: string | undefined;
    let takes = 'a field takes one column';
    if (col.kind === 'externalId') {
      what = 'the externalId';
      takes = 'the externalId takes one column';
    } else if (col.kind === 'relationship') {
      what = `the relationship ${col.def.key}`;
      takes = 'a relationship takes one column, its externalIds separated by ;';
    } else if (col.member === undefined) {
      what = `the field ${col.def.key}`;
      earlier = first.get(what) ?? first.get(`a member of ${col.def.key}`);
    } else {
      const whole = `the field ${col.def.key}`;
      what = first.has(whole) ? whole : `${whole}.${col.member}`;
      if (!first.has(`a member of ${col.def.key}`)) first.set(`a member of ${col.def.key}`, h);
    }
    earlier ??= first.get(what);
    if (earlier !== undefined) bad.push(new ImportError(line, h, `names ${what}, as column "${earlier}" does; ${takes}`));
    else first.set(what, h);
    return col;
  });
  return { columns, bad };
}

/**
 * The JSON path of each column's place in an import line (`externalId`, `relationships.<key>`,
 * `fields.<key>`, `fields.<key>.value.<member>`) → its header, for an error found once the rows
 * were read (`ImportSource.column`).
 */
function columnPaths(headers: string[], columns: Column[]): Map<string, string> {
  const paths = new Map<string, string>();
  columns.forEach((col, i) => {
    const path =
      col.kind === 'externalId'
        ? 'externalId'
        : col.kind === 'relationship'
          ? `relationships.${col.def.key}`
          : col.member === undefined
            ? `fields.${col.def.key}`
            : `fields.${col.def.key}.value.${col.member}`;
    paths.set(path, headers[i] as string);
  });
  return paths;
}

/**
 * The error of a header that names nothing because another character than the comma separates
 * its names (docs/import.md §CSV), read from the start of the file: it replaces the errors of its
 * columns (or of its quotes), which would only follow from it.
 */
async function separatorError(path: string, line: number): Promise<ImportError | undefined> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    const separator = foreignSeparator(head.toString('utf8', 0, bytesRead));
    if (separator === undefined) return undefined;
    const shown = separator === '\t' ? 'tabs' : `"${separator}"`;
    return new ImportError(line, '(header)', `separates its names with ${shown}: the cells of a CSV file are separated by commas`);
  } finally {
    await file.close();
  }
}

/** The rows of a CSV file of records of `type`, as import lines; the type's definitions are read once. */
export async function csvSource(ctx: Ctx, path: string, type: string): Promise<ImportSource> {
  if (RESERVED_TYPES.has(type) && !Object.hasOwn(RECORD_TYPES, type)) throw new InputError(`"${type}" has no records to import`, 'type');
  const defs = await loadDefinitions(ctx, { objectType: type });
  if (!defs) throw new InputError(`no object type "${type}" in the workspace (account, contact, opportunity, note, task or a custom type's slug)`, 'type');
  let paths = new Map<string, string>();
  return {
    async *objects(): AsyncGenerator<SourceObject> {
      // A workbook or other binary file is refused whole, before its bytes are read as rows.
      const binary = await binaryError(path);
      if (binary) {
        yield { line: 1, value: undefined, error: binary };
        return;
      }
      const { parser, rows, failure } = csvRows();
      // A read error ends the rows with that error instead of going unhandled (pipe forwards none).
      // A byte that is not UTF-8 ends them after the rows before its line, then is reported.
      let notUtf8: ImportError | undefined;
      const input = utf8File(path, '(row)').on('error', (err) => {
        if (!(err instanceof ImportError)) parser.destroy(new InputError(`cannot read ${path}: ${err.message}`));
        else {
          notUtf8 = err;
          parser.end();
        }
      });
      input.pipe(parser);
      let headers: string[] | undefined;
      let columns: Column[] = [];
      let failed = false;
      let sepLine = false;
      try {
        for await (const { cells: record, line } of rows) {
          if (!headers) {
            // Excel's `sep=,` line before the header tells Excel the separator, the comma a CSV
            // file has here: it is no header, and skipped (docs/import.md §CSV).
            if (!sepLine && record.length === 2 && record[0] === 'sep=' && record[1] === '') {
              sepLine = true;
              continue;
            }
            headers = record;
            const header = headerColumns(defs, headers, line);
            columns = header.columns;
            const bad = header.bad;
            if (columns.length > 0 && !columns.some((c) => c.kind === 'externalId'))
              bad.push(new ImportError(line, 'externalId', 'the header needs a column named externalId'));
            // A header that names nothing makes every row wrong: it alone is reported.
            if (bad.length > 0) {
              const separator = await separatorError(path, line);
              for (const e of separator ? [separator] : bad) yield { line, value: undefined, error: e };
              return;
            }
            paths = columnPaths(headers, columns);
            continue;
          }
          // A row of empty cells (the `,,,,` a spreadsheet writes after its last row) holds no
          // record: skipped as an empty line is (docs/import.md §CSV).
          if (record.every((cell) => cell.trim() === '')) continue;
          // The header again (two files joined one after the other, as by cat) holds no record: taken
          // as one, it would write a record whose externalId is "externalId" (docs/import.md §CSV).
          const heads = headers;
          if (record.length === heads.length && record.every((cell, i) => fold(cell) === fold(heads[i] as string))) {
            yield { line, value: undefined, error: new ImportError(line, '(row)', REPEATED_HEADER) };
            continue;
          }
          const row = rowObject(line, type, defs, headers, columns, record);
          if ('value' in row) yield { line, value: row.value };
          else for (const error of row.errors) yield { line, value: undefined, error };
        }
      } catch (err) {
        const bad = failure(err);
        if (!bad) throw err;
        failed = true;
        // A header whose quotes are not a comma-separated file's: its separator says why.
        const separator = !headers && !notUtf8 && bad.field === '(header)' ? await separatorError(path, bad.line) : undefined;
        // The rows cut before a byte that is not UTF-8 (a quoted cell left open) are its error alone.
        if (!notUtf8) yield { line: bad.line, value: undefined, error: separator ?? bad };
      }
      if (notUtf8) yield { line: notUtf8.line, value: undefined, error: notUtf8 };
      // A file without a header (empty, or empty lines only) names no column: the externalId the
      // rows need has none, and an export that wrote nothing is told apart from one without rows.
      else if (!headers && !failed)
        yield {
          line: 1,
          value: undefined,
          error: new ImportError(1, '(header)', 'the file holds no header: a CSV file starts with a header naming its columns, externalId among them'),
        };
    },
    // The longest start of the path that a column fills: `relationships.$account.values[1]` is
    // the column of `relationships.$account`.
    column(field) {
      for (let end = field.length; end > 0; end = Math.max(field.lastIndexOf('.', end - 1), field.lastIndexOf('[', end - 1))) {
        const header = paths.get(field.slice(0, end));
        if (header !== undefined) return header;
      }
      return undefined;
    },
  };
}
