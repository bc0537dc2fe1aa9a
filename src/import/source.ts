// Where an import's objects come from (docs/import.md §Format): an NDJSON file read line by line,
// a JSON array, or text in memory. A source can be read again from its start: the runner reads
// it once to check every object and once per step to write them, so that it never holds the
// whole file (docs/import.md §Memory).
import { isUtf8 } from 'node:buffer';
import { open, readFile } from 'node:fs/promises';
import { deeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { firstKeptNumber, mayHoldUnheldNumber, parseKeepingNumbers, shownLiteral } from '../lib/json-numbers.ts';
import { binaryError } from './binary.ts';
import { ImportError } from './kind.ts';
import { linesOf } from './lines.ts';
import { firstInvalid, notUtf8, utf8File } from './utf8.ts';

export interface SourceObject {
  /** The line (NDJSON, CSV) or item number (JSON array) the object came from. */
  line: number;
  value: unknown;
  /** Set when the line could not be parsed: the runner reports it with the others. */
  error?: ImportError;
}

export interface ImportSource {
  /** The objects from the start, one at a time; each call reads the input again. */
  objects(): AsyncIterable<SourceObject>;
  /**
   * The name the input gives the place `field` (an object's JSON path, as `ImportError.field`) once
   * its objects were read, for an error found after it: a CSV file's column. Undefined when the
   * path is the input's own name (NDJSON, JSON).
   */
  column?(field: string): string | undefined;
}

/** Why a line nests too deep: what checks an object walks it by recursion, as a body's checks do. */
const TOO_DEEP = `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;

/**
 * The object of `line`, or its error: a number that a double does not hold as written (1e400,
 * 12345678901234567890) fails the line with its place, as the API refuses it in a body
 * (docs/errors.md §Numbers in bodies), rather than being stored as another number; so does a
 * value nested deeper than a body may be (docs/errors.md), which would overflow the stack.
 */
function parsed(value: unknown, line: number, kept: boolean): SourceObject {
  if (deeperThan(value, MAX_JSON_DEPTH)) return { line, value: undefined, error: new ImportError(line, '(line)', TOO_DEEP) };
  const unheld = kept ? firstKeptNumber(value) : null;
  if (unheld === null) return { line, value };
  return {
    line,
    value: undefined,
    error: new ImportError(line, unheld.path === '' ? '(line)' : unheld.path, `${shownLiteral(unheld.source)} ${unheld.reason}`),
  };
}

/**
 * JSON.parse's reason for one NDJSON line, its place as the column in that line: its own place
 * counts the lines of the text it read, one line here, and would name line 1 beside the file's
 * line (docs/import.md §Format). `indent` is the white space trimmed before the text.
 */
function lineReason(message: string, indent: number): string {
  return message.replace(/ at position \d+ \(line \d+ column (\d+)\)/, (_, column: string) => ` at column ${Number(column) + indent}`);
}

/**
 * What to do with a first line that is no JSON but the header of a table, its names separated by
 * commas, `;` or tabs outside quotes (a CSV or TSV file read as NDJSON, docs/import.md §Format);
 * undefined for any other line. A line of JSON opens with `{` (or `[`, a JSON array's).
 */
function headerHint(text: string): string | undefined {
  const l = text.trim();
  if (l.startsWith('{') || l.startsWith('[')) return undefined;
  let commas = 0;
  let tabs = 0;
  let quoted = false;
  for (const c of l) {
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === ',' || c === ';') commas++;
    else if (c === '\t') tabs++;
  }
  if (tabs > commas) return 'it looks like the header of tab-separated values: save the file as comma-separated CSV and import that with --format csv --type T';
  if (commas > 0) return 'it looks like the header of a CSV file: import it with --format csv --type T';
  return undefined;
}

function parseLine(text: string, line: number): SourceObject | undefined {
  const l = text.trim();
  if (l === '') return undefined;
  const kept = mayHoldUnheldNumber(l);
  let value: unknown;
  try {
    value = parseKeepingNumbers(l);
  } catch (err) {
    // Parsing with the reviver that keeps numbers recurses, and overflows on such a line.
    if (err instanceof RangeError) return { line, value: undefined, error: new ImportError(line, '(line)', TOO_DEEP) };
    const reason = lineReason((err as Error).message, text.length - text.trimStart().length);
    return { line, value: undefined, error: new ImportError(line, '(line)', `not valid JSON: ${reason}`) };
  }
  return parsed(value, line, kept);
}

function* arrayItems(text: string): Generator<SourceObject> {
  const kept = mayHoldUnheldNumber(text);
  let arr: unknown;
  try {
    // A UTF-8 byte order mark, as editors on Windows write one, is no part of the JSON.
    arr = parseKeepingNumbers(text.startsWith('\ufeff') ? text.slice(1) : text);
  } catch (err) {
    // The reviver that keeps numbers recurses, and overflows on an item nested that deep; the
    // array is parsed whole, so no item's line is known.
    if (err instanceof RangeError) throw new ImportError(0, '(file)', `an item ${TOO_DEEP}`);
    throw new ImportError(0, '(file)', `not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(arr)) throw new ImportError(0, '(file)', 'a JSON file must hold an array of objects');
  for (let i = 0; i < arr.length; i++) yield parsed(arr[i], i + 1, kept);
}

/** NDJSON or a JSON array held in memory (the demo, tests). */
export function textSource(text: string): ImportSource {
  return {
    async *objects() {
      if (text.trimStart().startsWith('[')) {
        yield* arrayItems(text);
        return;
      }
      let line = 0;
      let start = 0;
      while (start <= text.length) {
        let end = text.indexOf('\n', start);
        if (end < 0) end = text.length;
        line++;
        const o = parseLine(text.slice(start, end), line);
        if (o) yield o;
        start = end + 1;
      }
    },
  };
}

/** The first character of the file that is not white space, or '' for an empty file. */
async function firstCharacter(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(4096);
    for (let pos = 0; ;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return '';
      const m = /\S/.exec(buf.subarray(0, bytesRead).toString('utf8'));
      if (m) return m[0];
      pos += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/**
 * A file of NDJSON, streamed line by line: memory holds one line at a time. A file whose first
 * character is `[` is a JSON array, parsed whole (docs/import.md §Memory: NDJSON is the format
 * for large imports).
 */
export async function fileSource(path: string): Promise<ImportSource> {
  const array = (await firstCharacter(path)) === '[';
  return {
    async *objects() {
      if (array) {
        const bytes = await readFile(path);
        if (!isUtf8(bytes)) {
          const offset = firstInvalid(bytes);
          throw await notUtf8(path, offset, bytes[offset] as number, '(file)');
        }
        yield* arrayItems(bytes.toString('utf8'));
        return;
      }
      // A workbook or other binary file is refused whole, before its bytes are read as lines.
      const binary = await binaryError(path);
      if (binary) {
        yield { line: 1, value: undefined, error: binary };
        return;
      }
      // Bytes that are not UTF-8 end the lines with their error, reported with the lines before.
      const lines = linesOf(utf8File(path, '(line)'));
      let line = 0;
      let first = true;
      try {
        for await (const text of lines) {
          line++;
          const o = parseLine(text, line);
          if (!o) continue;
          // A table's header first: every line after it would be refused too, so it alone is, saying why.
          const hint = first && o.error?.reason.startsWith('not valid JSON') ? headerHint(text) : undefined;
          if (hint) {
            yield { line, value: undefined, error: new ImportError(line, '(line)', `not valid JSON: ${hint}`) };
            return;
          }
          first = false;
          yield o;
        }
      } catch (err) {
        if (!(err instanceof ImportError)) throw err;
        yield { line: err.line, value: undefined, error: err };
      }
    },
  };
}
