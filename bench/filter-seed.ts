// Contacts and tasks for the filter and page benches (bench/filters.ts, bench/slow-scan.ts, bench/pages.ts --type tasks): rows written in bulk with
// the value and trigram indexes dropped, which are then built again from their own stored
// definitions, so the tables end as the migrations made them.
import { sql } from 'kysely';
import { rankRebuildAll } from '../src/db/rank/index.ts';
import type { DialectName, Executor } from '../src/db/types.ts';
import type { TypeDefinitions } from '../src/definitions/service.ts';
import { FACETS, rankedFields } from '../src/records/index/facets.ts';
import { trigramRows } from '../src/records/index/repository.ts';
import { valueRows } from '../src/records/index/values.ts';
import { RECORDS } from '../src/records/repository.ts';
import { write } from '../src/db/write.ts';

const T0 = Date.UTC(2026, 0, 1);
const FIRST = Array.from({ length: 100 }, (_, i) => `Given${String(i).padStart(2, '0')}`);
const TABLES = ['record_values', 'record_trigrams'];

/** The secondary indexes of the value and trigram tables, as statements that create them again. */
async function indexes(db: Executor, dialect: DialectName): Promise<{ name: string; ddl: string }[]> {
  if (dialect === 'sqlite') {
    const r = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'index' and sql is not null
      and tbl_name in (${sql.join(TABLES)})`.execute(db);
    return r.rows.map((x) => ({ name: x.name, ddl: x.sql }));
  }
  const r = await sql<{ name: string; ddl: string }>`select indexname as name, indexdef as ddl from pg_indexes where schemaname = current_schema()
    and tablename in (${sql.join(TABLES)}) and indexname not like '%_pkey'`.execute(db);
  return r.rows;
}

/**
 * `n` contacts of workspace `ws` (ids `con_00000000`…, created a second apart from 2026-01-01),
 * with the custom fields `code` (TEXT, `code${j % (n / 100)}`) and `score` (NUMBER, a permutation
 * of 0…n−1) that `defs` must hold, indexed as the API indexes them.
 */
export async function seedFilterContacts(db: Executor, dialect: DialectName, ws: string, defs: TypeDefinitions, n: number): Promise<void> {
  await seedRecords(db, dialect, ws, defs, n, 'contact', new Set(['$email']), (j) => ({
    $name: { firstName: FIRST[j % 100], lastName: `Family${j}` },
    $email: [`person${j}@company${j % (n / 1000)}.example`],
    code: `code${j % (n / 100)}`,
    // A permutation of 0..n-1: any interval of 10,000 holds 10,000 contacts.
    score: (j * 7919) % n,
  }));
}

/**
 * `n` tasks of workspace `ws` (ids `tsk_00000000`…, created a second apart from 2026-01-01), with
 * `$status` cycling through TODO, IN_PROGRESS, COMPLETE, CANCELLED (n/4 each; `bunched`: the newest
 * n/4 TODO and the older ones cycling through the other three) and `$dueAt` one minute apart from
 * 2026-01-01 in the order of a permutation of 0…n−1 (`taskDueAt(k)` is the k-th minute), so any k
 * consecutive minutes hold k tasks spread over the listing.
 */
export async function seedFilterTasks(db: Executor, dialect: DialectName, ws: string, defs: TypeDefinitions, n: number, bunched = false): Promise<void> {
  const status = ['TODO', 'IN_PROGRESS', 'COMPLETE', 'CANCELLED'];
  // Bunched is the shape where the new work is still to do; either way a quarter is TODO.
  const statusOf = (j: number) => (!bunched ? status[j % 4] : j >= n - Math.floor(n / 4) ? 'TODO' : status[1 + (j % 3)]);
  await seedRecords(db, dialect, ws, defs, n, 'task', new Set(), (j) => ({
    $title: `Task ${j}`,
    $status: statusOf(j),
    $dueAt: taskDueAt((j * 7919) % n),
  }));
}

export const taskDueAt = (k: number): string => new Date(T0 + k * 60_000).toISOString();

async function seedRecords(
  db: Executor,
  dialect: DialectName,
  ws: string,
  defs: TypeDefinitions,
  n: number,
  kind: 'contact' | 'task',
  fields: Set<string>,
  valuesOf: (j: number) => Record<string, unknown>,
): Promise<void> {
  const built = await indexes(db, dialect);
  for (const i of built) await sql`drop index ${sql.id(i.name)}`.execute(db);
  const insert = async (tx: Executor, table: 'records' | 'record_values' | 'record_trigrams', rows: object[], per: number) => {
    for (let k = 0; k < rows.length; k += per)
      await tx
        .insertInto(table)
        .values(rows.slice(k, k + per))
        .execute();
  };
  const prefix = kind === 'contact' ? 'con' : 'tsk';
  for (let i = 0; i < n; i += 20_000) {
    await write(db, async (tx) => {
      const records = [];
      const values = [];
      for (let j = i; j < Math.min(n, i + 20_000); j++) {
        const id = `${prefix}_${String(j).padStart(8, '0')}`;
        const at = new Date(T0 + j * 1000).toISOString();
        const v = valuesOf(j);
        records.push({ id, workspace_id: ws, kind, external_id: null, fields: JSON.stringify(v), created_at: at, updated_at: at });
        values.push(...valueRows(ws, defs, id, v));
      }
      await insert(tx, 'records', records, 500);
      await insert(tx, 'record_values', values, 800);
      if (fields.size > 0) await insert(tx, 'record_trigrams', trigramRows(values, fields), 1000);
    });
  }
  for (const i of built) await sql.raw(i.ddl).execute(db);
  await rankRebuildAll(db, RECORDS);
  // The ranked sets of listed values (a task's `$status`, docs/filtering.md §Ranked values), as
  // writeValueIndex would have written them.
  const ranked = [...rankedFields(defs)];
  if (ranked.length > 0) {
    await sql`insert into record_facets (workspace_id, object_type, field, value_text, created_at, record_id)
      select v.workspace_id, v.object_type, v.field, v.value_text, r.created_at, r.id from record_values v join records r on r.id = v.record_id
      where v.workspace_id = ${ws} and v.object_type = ${kind} and v.field in (${sql.join(ranked)}) and v.value_text is not null`.execute(db);
    await rankRebuildAll(db, FACETS);
  }
}
