// Multi-row inserts of many uniform rows (the value and trigram indexes, docs/import.md §Speed)
// without Kysely's building and compiling of every value, which cost an import more CPU than
// SQLite's own work on those rows. The statement text depends only on the table, the columns and
// the number of rows, so it is built once and prepared once per connection (src/db/sqlite/cached.ts,
// src/db/postgres/connection.ts). Values are bound parameters, as everywhere. The rows answer nothing, so
// on PostgreSQL inside a transaction they go out with the next statement awaited
// (src/db/pipeline.ts): a record create writes its row, counts, values and postings in one round
// trip (docs/performance.md §Record reads and writes).
import { CompiledQuery } from 'kysely';
import { deferred } from './pipeline.ts';
import { isPostgres } from './dialect.ts';
import type { Database, Tx } from './types.ts';

const texts = new Map<string, string>();

/**
 * The statement of `rows` rows. On SQLite, the columns in `shared` hold the same value in every
 * row and are bound once: `insert … select ?, column1, … from (values (?, …), …)`, where SQLite
 * numbers the parameters in the order of the text, the shared ones first. A bulk import's value
 * rows share their workspace and type, and its records their workspace, kind and times: a third
 * to a half fewer parameters to copy to the writer thread and bind (docs/import.md §Speed).
 */
function statement(pg: boolean, table: string, columns: readonly string[], rows: number, shared: readonly boolean[]): string {
  const key = `${pg ? 'p' : 's'}|${table}|${columns.join(',')}|${rows}|${shared.map(Number).join('')}`;
  let text = texts.get(key);
  if (text !== undefined) return text;
  let n = 0;
  const own = columns.filter((_, i) => !shared[i]);
  const tuple = () => `(${own.map(() => (pg ? `$${++n}` : '?')).join(', ')})`;
  const into = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')})`;
  if (own.length === columns.length) text = `${into} values ${Array.from({ length: rows }, tuple).join(', ')}`;
  else {
    let k = 0;
    const picks = shared.map((s) => (s ? '?' : `column${++k}`));
    text = `${into} select ${picks.join(', ')} from (values ${Array.from({ length: rows }, tuple).join(', ')})`;
  }
  // A few texts per table (statementSizes); the bound keeps the map small whatever the callers.
  if (texts.size >= 200) texts.clear();
  texts.set(key, text);
  return text;
}

/** Which columns hold one value in every row of `part` (SQLite only, and never all of them). */
function sharedColumns<R>(pg: boolean, columns: readonly (keyof R)[], part: readonly R[]): boolean[] {
  const none = columns.map(() => false);
  if (pg || part.length < 2) return none;
  const first = part[0] as R;
  const shared = columns.map((c) => part.every((r) => r[c] === first[c]));
  return shared.every(Boolean) ? none : shared;
}

/**
 * The row counts of the statements that insert `total` rows: `perStatement` each, then the rest as
 * descending powers of two down to SMALL_ROWS, and what is left of it in one statement
 * (1,300 by 500 → 500, 500, 256, 44). A statement's text, and so its prepared form, depends on
 * its row count, and a prepared statement of a few thousand parameters takes some hundreds of KB
 * of the connection's memory: with any rest length every batch's last statement would be a text
 * of its own, and the connection's statement cache would fill with them (docs/import.md §Memory).
 * Below SMALL_ROWS a count is one statement whatever it is: those statements are small, there are
 * at most SMALL_ROWS of them a table, and a request's few rows stay one statement.
 */
export const SMALL_ROWS = 64;

export function statementSizes(total: number, perStatement: number): number[] {
  const out: number[] = [];
  let left = total;
  for (; left >= perStatement; left -= perStatement) out.push(perStatement);
  for (let p = 2 ** Math.floor(Math.log2(Math.max(1, left))); left > SMALL_ROWS; p /= 2) {
    if (p <= left) {
      out.push(p);
      left -= p;
    }
  }
  if (left > 0) out.push(left);
  return out;
}

/** Inserts `rows` into `table`, `perStatement` rows a statement (columns × rows stays below the parameter limits). */
export async function insertRows<T extends keyof Database>(
  db: Tx,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly Database[T][],
  perStatement: number,
): Promise<void> {
  const pg = isPostgres(db);
  let i = 0;
  for (const size of statementSizes(rows.length, perStatement)) {
    const part = rows.slice(i, i + size);
    i += size;
    const shared = sharedColumns(pg, columns, part);
    const params: unknown[] = [];
    const first = part[0] as Database[T];
    const own = columns.filter((_, k) => !shared[k]);
    for (const c of columns.filter((_, k) => shared[k])) params.push(first[c] ?? null);
    for (const r of part) for (const c of own) params.push(r[c] ?? null);
    const text = statement(pg, table, columns, part.length, shared);
    await deferred(db, { compile: () => CompiledQuery.raw(text, params) });
  }
}
