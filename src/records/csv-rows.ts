// The rows of a CSV file as csv-parse reads them, each with the line of the file it starts on, as
// an editor numbers them (docs/import.md §CSV). csv-parse tells only where a record ends: its
// `info.lines` (and `raw`, `on_record`'s context, an error's `lines`) is the line it is at, where a
// `\r\n` inside a quoted cell counts as two. So the line is counted here, as records are parsed:
// a record starts on the line after the one the record before it ended on, past the empty lines
// skipped between them (`info.empty_lines`), and spans one more line for each line break its cells
// hold (`\r\n`, `\n` or `\r` one each). A record csv-parse refuses starts where the next record
// would: its error names that line, in our count, and no line of csv-parse's.
import { CsvError, type Options, type Parser, parse } from 'csv-parse';
import { ImportError } from '../import/kind.ts';

export interface CsvRow {
  cells: string[];
  /** The line of the file the row starts on. */
  line: number;
}

/**
 * The most a row may hold, in bytes. A quoted cell whose closing quote is missing runs to the next
 * quote of the file, or its end: without a bound the parser would hold all of that in memory, which
 * the import keeps flat whatever the file's size (docs/import.md §CSV).
 */
export const MAX_ROW_BYTES = 16 * 1024 * 1024;

/** The line breaks inside a record's cells: `\r\n`, `\n` or `\r` one each. */
function breaksIn(cells: readonly string[]): number {
  let breaks = 0;
  for (const cell of cells) {
    if (!cell.includes('\n') && !cell.includes('\r')) continue;
    for (let i = 0; i < cell.length; i++) {
      const c = cell[i];
      if (c === '\n') breaks++;
      else if (c === '\r') {
        breaks++;
        if (cell[i + 1] === '\n') i++;
      }
    }
  }
  return breaks;
}

/** What is wrong in the words of the import, without csv-parse's line (`at line 5`). */
function reason(err: CsvError): string {
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted cell is not closed: the file ends before its closing quote';
    case 'CSV_INVALID_CLOSING_QUOTE': {
      const got = /got ("[^"]*"|\S+)/.exec(err.message)?.[1];
      return `a quoted cell's closing quote is followed by ${got ?? 'a character'}, not by a comma or the end of the line`;
    }
    case 'CSV_MAX_RECORD_SIZE':
      return `the row is longer than ${MAX_ROW_BYTES / 1024 / 1024} MiB, the most a row holds: is a quoted cell's closing quote missing?`;
    case 'INVALID_OPENING_QUOTE':
      return 'a quote inside a cell that does not start with one: quote the whole cell and double each quote in it';
    default:
      return err.message.replace(/ (at|on) line \d+/g, '');
  }
}

/**
 * The character that separates the header's names, when it is `;` or a tab rather than a comma
 * (a spreadsheet's export in some languages); `text` is the start of the file. The separators are
 * counted on the header's line outside quotes, so a comma inside a name (`"Smith, Inc"`) or a `;`
 * inside a quoted name of a comma-separated header does not count.
 */
export function foreignSeparator(text: string): ';' | '\t' | undefined {
  let i = text.startsWith('\uFEFF') ? 1 : 0;
  // Empty lines before the header, which the parser skips.
  while (text[i] === '\n' || text[i] === '\r') i++;
  let commas = 0;
  let semicolons = 0;
  let tabs = 0;
  let quoted = false;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '\n' || c === '\r') break;
    else if (c === ',') commas++;
    else if (c === ';') semicolons++;
    else if (c === '\t') tabs++;
  }
  if (semicolons > commas && semicolons >= tabs) return ';';
  return tabs > commas ? '\t' : undefined;
}

export interface CsvRows {
  /** The stream to pipe the file's text into. */
  parser: Parser;
  rows: AsyncIterable<CsvRow>;
  /**
   * The ImportError of a CSV syntax error thrown by `rows`, at the line its record starts on and
   * the header of its column (`(header)` in the header); undefined for any other error.
   */
  failure: (err: unknown) => ImportError | undefined;
}

export function csvRows(): CsvRows {
  let ended = 0;
  let skipped = 0;
  // The first record, as parsed: the consumer may not have had it when a later record fails.
  let headers: string[] | undefined;
  const startOf = (emptyLines: number) => ended + 1 + (emptyLines - skipped);
  const options: Options<CsvRow, string[]> = {
    bom: true,
    // Every line break ends a row, whichever the file's first line ends with: csv-parse takes the
    // first one it meets for the whole file otherwise, and a `\n` after a `\r\n` header would join
    // rows into one cell. `\r\n` first, so that it is one break and not two.
    record_delimiter: ['\r\n', '\n', '\r'],
    max_record_size: MAX_ROW_BYTES,
    relax_column_count: true,
    skip_empty_lines: true,
    // Called as each record is parsed, before a later record's error: the count is never behind.
    on_record: (cells, info) => {
      const line = startOf(info.empty_lines);
      ended = line + breaksIn(cells);
      skipped = info.empty_lines;
      headers ??= cells;
      return { cells, line };
    },
  };
  // csv-parse's types let on_record return the record's own type only.
  const parser = parse(options as unknown as Options);
  return {
    parser,
    rows: parser as AsyncIterable<CsvRow>,
    failure: (err) => {
      if (!(err instanceof CsvError)) return undefined;
      const line = startOf(typeof err.empty_lines === 'number' ? err.empty_lines : skipped);
      const column = !headers ? '(header)' : typeof err.column === 'number' ? headers[err.column] : undefined;
      return new ImportError(line, column ?? '(row)', `not valid CSV: ${reason(err)}`);
    },
  };
}
