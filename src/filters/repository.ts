// SQL of filtered record listings and of the trigram index (docs/filtering.md). Every value a
// filter carries is a bound parameter; only fixed fragments of this file are SQL text.
import { deferred } from '../db/pipeline.ts';
import { type RawBuilder, sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { insertRows } from '../db/insert-rows.ts';
import { isPostgres } from '../db/rank-def.ts';
import type { Executor } from '../db/types.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { RecordValuesTable } from '../records/tables.ts';
import type { RecordTrigramsTable } from './tables.ts';
import { addTrigramKeys, CONTAINS_TYPES, type KeyScope, keyScope, likeLiteral, prefixEnd, trigramKey } from './trigrams.ts';

/** A condition on one value-index row `v` of a field. */
export type ValueCond =
  { op: 'equal'; text: string } | { op: 'startsWith'; text: string } | { op: 'contains'; text: string } | { op: 'num'; eq?: number; gt?: number; lt?: number };

/** One positive condition of a plan: a field's values or a relationship's ids. */
export type Atom =
  | { kind: 'values'; field: string; cond: ValueCond; multiRow: boolean; trigram?: string }
  | { kind: 'own'; name: string; id: string }
  | { kind: 'inverse'; name: string; id: string };

export interface Scope {
  workspaceId: string;
  objectType: string;
}

function valueCond(db: Executor, c: ValueCond): RawBuilder<unknown> {
  switch (c.op) {
    case 'equal':
      return sql`v.value_text = ${c.text}`;
    case 'contains':
      return sql`v.value_text like ${`%${likeLiteral(c.text)}%`} escape '\\'`;
    case 'startsWith': {
      // Code point order on both databases: SQLite compares text as bytes; PostgreSQL is told
      // "C", which the record_values_prefix index of migration 0012 is built with.
      const col = isPostgres(db) ? sql`v.value_text collate "C"` : sql`v.value_text`;
      const end = prefixEnd(c.text);
      return end === null ? sql`${col} >= ${c.text}` : sql`${col} >= ${c.text} and ${col} < ${end}`;
    }
    case 'num': {
      const parts: RawBuilder<unknown>[] = [];
      if (c.eq !== undefined) parts.push(sql`v.value_num = ${c.eq}`);
      if (c.gt !== undefined) parts.push(sql`v.value_num > ${c.gt}`);
      if (c.lt !== undefined) parts.push(sql`v.value_num < ${c.lt}`);
      return sql.join(parts, sql` and `);
    }
  }
}

/** The key of a trigram's postings in one field of a scope. */
function keyOf(s: Scope, field: string, trigram: string): number {
  return trigramKey(keyScope(s.workspaceId, s.objectType, field), trigram);
}

/** The ids of the records an atom holds, as `record_id` (distinct). Relationship drivers need a type check. */
export function driverSql(db: Executor, s: Scope, a: Atom): RawBuilder<unknown> {
  if (a.kind === 'own') return sql`select distinct e.source_id as record_id from entity_relationships e where e.target_id = ${a.id} and e.name = ${a.name}`;
  if (a.kind === 'inverse') return sql`select distinct e.target_id as record_id from entity_relationships e where e.source_id = ${a.id} and e.name = ${a.name}`;
  const where = sql`v.workspace_id = ${s.workspaceId} and v.object_type = ${s.objectType} and v.field = ${a.field}`;
  if (a.cond.op === 'contains' && a.trigram !== undefined) {
    // Candidates from one trigram's postings, each checked against its own values.
    return sql`select g.record_id from record_trigrams g where g.key = ${keyOf(s, a.field, a.trigram)}
      and exists (select 1 from record_values v where v.record_id = g.record_id and v.field = ${a.field} and ${valueCond(db, a.cond)})`;
  }
  return a.multiRow
    ? sql`select distinct v.record_id from record_values v where ${where} and ${valueCond(db, a.cond)}`
    : sql`select v.record_id from record_values v where ${where} and ${valueCond(db, a.cond)}`;
}

/** Whether the record `r.id` satisfies an atom, probing by record id. */
export function checkSql(db: Executor, a: Atom): RawBuilder<unknown> {
  if (a.kind === 'own') return sql`exists (select 1 from entity_relationships e where e.source_id = r.id and e.name = ${a.name} and e.target_id = ${a.id})`;
  if (a.kind === 'inverse') return sql`exists (select 1 from entity_relationships e where e.source_id = ${a.id} and e.name = ${a.name} and e.target_id = r.id)`;
  return sql`exists (select 1 from record_values v where v.record_id = r.id and v.field = ${a.field} and ${valueCond(db, a.cond)})`;
}

function toNumber(v: unknown): number {
  return typeof v === 'string' ? Number(v) : (v as number);
}

/** Rows of `query`, counted up to `cap` (an index range read stops there). */
export async function cappedCount(db: Executor, query: RawBuilder<unknown>, cap: number): Promise<number> {
  const r = await sql<{ n: unknown }>`select count(*) as n from (${query} limit ${cap}) x`.execute(db);
  return toNumber(r.rows[0]?.n);
}

/** How many postings each of `trigrams` has in a field, each counted up to `cap`, in one statement. */
export async function trigramCounts(db: Executor, s: Scope, field: string, trigrams: readonly string[], cap: number): Promise<Map<string, number>> {
  const probes = trigrams.map(
    (t) =>
      sql`select cast(${t} as text) as t, (select count(*) from (select 1 from record_trigrams g where g.key = ${keyOf(s, field, t)} limit ${cap}) x) as n`,
  );
  const r = await sql<{ t: string; n: unknown }>`${sql.join(probes, sql` union all `)}`.execute(db);
  return new Map(r.rows.map((x) => [x.t, toNumber(x.n)]));
}

export async function count(db: Executor, query: RawBuilder<unknown>): Promise<number> {
  const r = await sql<{ n: unknown }>`select count(*) as n from (${query}) x`.execute(db);
  return toNumber(r.rows[0]?.n);
}

export async function ids(db: Executor, query: RawBuilder<unknown>): Promise<string[]> {
  const r = await sql<{ id: string }>`${query}`.execute(db);
  return r.rows.map((x) => x.id);
}

/**
 * Replaces the postings of `recordIds` by those of `rows` (the records' value-index rows, as
 * replaceValues writes them): one per distinct trigram key of each field whose valueType is
 * filtered with `contains`. The old postings are the trigrams of the old values (a field's
 * valueType never changes), read before replaceValues removes them, so only the difference is
 * deleted and inserted and no index by record is needed. Call it in the same transaction, before
 * replaceValues.
 */
export async function replaceTrigrams(tx: Executor, defs: TypeDefinitions, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  const fields = new Set([...defs.fields.values()].filter((f) => CONTAINS_TYPES.has(f.valueType)).map((f) => f.key));
  if (fields.size === 0) return;
  let fresh = trigramRows(rows, fields);
  if (recordIds.length > 0) {
    const old: RecordValuesTable[] = [];
    for (const part of chunks([...recordIds])) {
      old.push(
        ...(await tx
          .selectFrom('record_values')
          .selectAll()
          .where('record_id', 'in', part)
          .where('field', 'in', [...fields])
          .execute()),
      );
    }
    const pair = (r: RecordTrigramsTable) => `${r.key}|${r.record_id}`;
    const had = trigramRows(old, fields);
    const kept = new Set(fresh.map(pair));
    const stale = had.filter((r) => !kept.has(pair(r)));
    const present = new Set(had.map(pair));
    fresh = fresh.filter((r) => !present.has(pair(r)));
    // 2 values a posting; the cast makes PostgreSQL compare bigint with bigint.
    for (const part of chunks(stale, 1000)) {
      const list = sql.join(part.map((r) => sql`(cast(${r.key} as bigint), ${r.record_id})`));
      await deferred(tx, sql`delete from record_trigrams where (key, record_id) in (values ${list})`);
    }
  }
  const bulk = bulkPostings.has(tx);
  await insertRows(tx, 'record_trigrams', ['key', 'record_id'], fresh, 2000, bulk ? BULK_POSTINGS : 'record_trigrams');
}

// A bulk import's postings (docs/import.md §Speed). Inserted batch by batch, each batch sorted,
// they landed all over the trigram table's one B-tree: at 1,000,000 contacts (some 37 million
// postings, a table larger than the import's 1 GB cache) their inserts took 218 of the import's
// 404 s, against 4.8 of 18.5 s at 100,000 (docs/performance.md §Import at 1,000,000). Appended
// to a temporary table instead and moved in one sorted statement at the end, each page of the
// B-tree is written once, in order.
const BULK_POSTINGS = 'bulk_postings';
const bulkPostings = new WeakSet<object>();

/**
 * Runs `fn` (the writes of a bulk import that only creates records, on SQLite) with its postings
 * gathered in a temporary table, then moves them into the trigram table sorted, in the same
 * transaction: the same rows as inserted one batch at a time. A rollback drops the temporary
 * table with the rest.
 */
export async function withPostingsDeferred<T>(tx: Executor, fn: () => Promise<T>): Promise<T> {
  await sql`create temp table ${sql.id(BULK_POSTINGS)} (key integer not null, record_id text not null)`.execute(tx);
  bulkPostings.add(tx);
  try {
    const out = await fn();
    await sql`insert into record_trigrams (key, record_id) select key, record_id from temp.${sql.id(BULK_POSTINGS)} order by key, record_id`.execute(tx);
    await sql`drop table temp.${sql.id(BULK_POSTINGS)}`.execute(tx);
    return out;
  } finally {
    // On a failure the import's rollback drops the temporary table with everything else.
    bulkPostings.delete(tx);
  }
}

/**
 * The postings of the value-index rows of `fields` (distinct per record and key), in key order so
 * that a batch fills the B-tree key by key (and a bulk import's sorted move at the end finds runs
 * already in order, docs/import.md §Speed). Within a key they stay in the order of `rows` (a
 * batch's records in creation order, nearly id order): comparing the ids as well cost an import
 * more than the inserts it orders. Grouped by key while they are made, so only the distinct keys
 * are sorted.
 */
export function trigramRows(rows: readonly RecordValuesTable[], fields: ReadonlySet<string>): RecordTrigramsTable[] {
  // The keys already given, per record (one array a record, not one a trigram).
  const given = new Map<string, number[]>();
  const scopes = new Map<string, KeyScope>();
  const byKey = new Map<number, string[]>();
  for (const r of rows) {
    if (!fields.has(r.field) || r.value_text === null) continue;
    let keys = given.get(r.record_id);
    if (keys === undefined) given.set(r.record_id, (keys = []));
    // A batch holds a few scopes: hashed once each.
    const sk = `${r.workspace_id}\u0000${r.object_type}\u0000${r.field}`;
    let scope = scopes.get(sk);
    if (scope === undefined) scopes.set(sk, (scope = keyScope(r.workspace_id, r.object_type, r.field)));
    const from = keys.length;
    addTrigramKeys(scope, r.value_text, keys);
    for (let i = from; i < keys.length; i++) {
      const k = keys[i]!;
      const ids = byKey.get(k);
      if (ids === undefined) byKey.set(k, [r.record_id]);
      else ids.push(r.record_id);
    }
  }
  const out: RecordTrigramsTable[] = [];
  for (const key of Float64Array.from(byKey.keys()).sort()) for (const record_id of byKey.get(key)!) out.push({ key, record_id });
  return out;
}
