// Multi-row inserts of many uniform rows (the value and trigram indexes, docs/import.md §Speed)
// without Kysely's building and compiling of every value, which cost an import more CPU than
// SQLite's own work on those rows. The statement text depends only on the table, the columns and
// the number of rows, so it is built once and prepared once per connection (src/db/sqlite.ts,
// src/db/postgres.ts). Values are bound parameters, as everywhere. The rows answer nothing, so
// on PostgreSQL inside a transaction they go out with the next statement awaited
// (src/db/pipeline.ts): a record create writes its row, counts, values and postings in one round
// trip (docs/performance.md §Record reads and writes).
import { CompiledQuery } from 'kysely';
import { deferred } from './pipeline.ts';
import { isPostgres } from './rank-def.ts';
import type { Database, Executor } from './types.ts';

const texts = new Map<string, string>();

function statement(pg: boolean, table: string, columns: readonly string[], rows: number): string {
  const key = `${pg ? 'p' : 's'}|${table}|${columns.join(',')}|${rows}`;
  let text = texts.get(key);
  if (text !== undefined) return text;
  let n = 0;
  const tuple = () => `(${columns.map(() => (pg ? `$${++n}` : '?')).join(', ')})`;
  text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: rows }, tuple).join(', ')}`;
  // Full chunks share one text; the last chunk of each call has its own length.
  if (texts.size >= 200) texts.clear();
  texts.set(key, text);
  return text;
}

/** Inserts `rows` into `table`, `perStatement` rows a statement (columns × rows stays below the parameter limits). */
export async function insertRows<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly Database[T][],
  perStatement: number,
): Promise<void> {
  const pg = isPostgres(db);
  for (let i = 0; i < rows.length; i += perStatement) {
    const part = rows.slice(i, i + perStatement);
    const params: unknown[] = [];
    for (const r of part) for (const c of columns) params.push(r[c] ?? null);
    const text = statement(pg, table, columns, part.length);
    await deferred(db, { compile: () => CompiledQuery.raw(text, params) });
  }
}
