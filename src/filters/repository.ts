// SQL of filtered record listings and of the trigram index (docs/filtering.md). Every value a
// filter carries is a bound parameter; only fixed fragments of this file are SQL text.
import { deferred } from '../db/pipeline.ts';
import { type RawBuilder, sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { insertRows } from '../db/insert-rows.ts';
import { isPostgres } from '../db/dialect.ts';
import type { Executor } from '../db/types.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { RecordValuesTable } from '../records/tables.ts';
import type { RecordTrigramPacksTable, RecordTrigramsTable } from './tables.ts';
import { addTrigramKeys, CONTAINS_TYPES, type KeyScope, keyScope, likeLiteral, prefixEnd, trigramKey } from './trigrams.ts';

/** A condition on one value-index row `v` of a field. */
export type ValueCond =
  | { op: 'equal'; text: string }
  | { op: 'startsWith'; text: string }
  | { op: 'contains'; text: string }
  | { op: 'set' }
  | { op: 'num'; eq?: number; gt?: number; ge?: number; lt?: number; le?: number };

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
      // Said outright: SQLite's planner does not infer it from LIKE, and the text index holds only
      // rows that have a text (migration 0025).
      return sql`v.value_text is not null and v.value_text like ${`%${likeLiteral(c.text)}%`} escape '\\'`;
    case 'set': {
      // A non-empty text: the part of the text index above the empty string.
      const col = isPostgres(db) ? sql`v.value_text collate "C"` : sql`v.value_text`;
      return sql`${col} > ''`;
    }
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
      if (c.ge !== undefined) parts.push(sql`v.value_num >= ${c.ge}`);
      if (c.lt !== undefined) parts.push(sql`v.value_num < ${c.lt}`);
      if (c.le !== undefined) parts.push(sql`v.value_num <= ${c.le}`);
      return sql.join(parts, sql` and `);
    }
  }
}

/** The key of a trigram's postings in one field of a scope. */
function keyOf(s: Scope, field: string, trigram: string): number {
  return trigramKey(keyScope(s.workspaceId, s.objectType, field), trigram);
}

/** The record ids of a key's packs (docs/filtering.md §Indexes, Packs), as `record_id`. */
function packedIds(db: Executor, key: number): RawBuilder<unknown> {
  return isPostgres(db)
    ? sql`select p.prefix || j.value as record_id from record_trigram_packs p cross join lateral jsonb_array_elements_text(cast(p.tails as jsonb)) as j(value) where p.key = ${key}`
    : sql`select p.prefix || j.value as record_id from record_trigram_packs p, json_each(p.tails) j where p.key = ${key}`;
}

/** The ids of the records an atom holds, as `record_id` (distinct). Relationship drivers need a type check. */
export function driverSql(db: Executor, s: Scope, a: Atom): RawBuilder<unknown> {
  if (a.kind === 'own') return sql`select distinct e.source_id as record_id from entity_relationships e where e.target_id = ${a.id} and e.name = ${a.name}`;
  if (a.kind === 'inverse') return sql`select distinct e.target_id as record_id from entity_relationships e where e.source_id = ${a.id} and e.name = ${a.name}`;
  const where = sql`v.workspace_id = ${s.workspaceId} and v.object_type = ${s.objectType} and v.field = ${a.field}`;
  if (a.cond.op === 'contains' && a.trigram !== undefined) {
    // Candidates from one trigram's postings and packs, each checked against its own values. A
    // record may be in both (a pack's stale id, then the trigram written again): `union` keeps it once.
    const key = keyOf(s, a.field, a.trigram);
    return sql`select c.record_id from (select g.record_id from record_trigrams g where g.key = ${key}
      union ${packedIds(db, key)}) c
      where exists (select 1 from record_values v where v.record_id = c.record_id and v.field = ${a.field} and ${valueCond(db, a.cond)})`;
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

/**
 * How many postings each of `trigrams` has in a field, in one statement: those of the posting
 * table counted up to `cap`, plus the ids of its packs (their kept counts, a few rows a key).
 */
export async function trigramCounts(db: Executor, s: Scope, field: string, trigrams: readonly string[], cap: number): Promise<Map<string, number>> {
  const probes = trigrams.map((t) => {
    const key = keyOf(s, field, t);
    return sql`select cast(${t} as text) as t, (select count(*) from (select 1 from record_trigrams g where g.key = ${key} limit ${cap}) x)
      + (select coalesce(sum(p.n), 0) from record_trigram_packs p where p.key = ${key}) as n`;
  });
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
  // New records of a bulk import: nothing to compare, their postings are gathered for packs.
  const pending = packing.get(tx);
  if (pending !== undefined && recordIds.length === 0) {
    pending.postings += addPostings(rows, fields, pending.byKey);
    if (pending.postings >= PACKS.postings) await writePacks(tx, pending);
    return;
  }
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
  await insertRows(tx, 'record_trigrams', ['key', 'record_id'], fresh, 2000);
}

// A bulk import's postings (docs/import.md §Speed, docs/filtering.md §Indexes, Packs): one row per
// key for every PACKS.postings gathered instead of one per posting. At 1,000,000 contacts, some 37 million postings took
// 69 of the import's 236 s in SQLite alone (appended to a temporary table, then moved into the
// posting table's B-tree in one sorted statement), and their B-tree was 1.8 GB.
const packing = new WeakMap<object, Pending>();

/** Postings gathered for packs, by key, in the order of their records. */
interface Pending {
  byKey: Map<number, string[]>;
  postings: number;
}

// Postings gathered over several batches before their packs are written (about 27,000 contacts):
// a pack row costs SQLite mostly per row, so fewer and longer ones cost less (at 1,000,000
// contacts, a pack per key and batch of 5,000 took 11.8 s for 435,245 rows). Bounded, so that
// memory stays bounded by a few batches and not by the file. Tests make it smaller.
export const PACKS = { postings: 1_000_000 };

async function writePacks(tx: Executor, pending: Pending): Promise<void> {
  const rows = packs(pending.byKey);
  pending.byKey = new Map();
  pending.postings = 0;
  await insertRows(tx, 'record_trigram_packs', ['key', 'first_id', 'prefix', 'tails', 'n'], rows, 500);
}

/**
 * Runs `fn` (the writes of an import that only creates records of a type that had none) with its
 * postings written as packs, in the same transaction. Nothing rewrites those records meanwhile,
 * so no pack holds a stale id when the import commits.
 */
export async function withPackedPostings<T>(tx: Executor, fn: () => Promise<T>): Promise<T> {
  const pending: Pending = { byKey: new Map(), postings: 0 };
  packing.set(tx, pending);
  try {
    const out = await fn();
    await writePacks(tx, pending);
    return out;
  } finally {
    packing.delete(tx);
  }
}

/** Postings grouped by key (addPostings) as one pack per key, in key order: its ids sorted, their common prefix kept once. */
function packs(byKey: ReadonlyMap<number, string[]>): RecordTrigramPacksTable[] {
  const out: RecordTrigramPacksTable[] = [];
  for (const key of Float64Array.from(byKey.keys()).sort()) {
    // Already in order when the records' ids are (an import's new ids are): a linear pass.
    const ids = byKey.get(key)!.sort();
    const first = ids[0]!;
    const last = ids[ids.length - 1]!;
    let p = 0;
    while (p < first.length && first.charCodeAt(p) === last.charCodeAt(p)) p++;
    out.push({ key, first_id: first, prefix: first.slice(0, p), tails: JSON.stringify(ids.map((id) => id.slice(p))), n: ids.length });
  }
  return out;
}

/**
 * The postings of the value-index rows of `fields` (distinct per record and key), in key order so
 * that a batch fills the B-tree key by key. Within a key they stay in the order of `rows` (a
 * batch's records in creation order, nearly id order): comparing the ids as well cost an import
 * more than the inserts it orders. Grouped by key while they are made, so only the distinct keys
 * are sorted.
 */
export function trigramRows(rows: readonly RecordValuesTable[], fields: ReadonlySet<string>): RecordTrigramsTable[] {
  const byKey = new Map<number, string[]>();
  addPostings(rows, fields, byKey);
  const out: RecordTrigramsTable[] = [];
  for (const key of Float64Array.from(byKey.keys()).sort()) for (const record_id of byKey.get(key)!) out.push({ key, record_id });
  return out;
}

/**
 * Adds to `byKey` (key → record ids) the postings of the value-index rows of `fields` (distinct
 * per record and key), in the order of `rows`; returns how many. A bulk import's batches add to
 * the postings gathered for their packs directly.
 */
function addPostings(rows: readonly RecordValuesTable[], fields: ReadonlySet<string>, byKey: Map<number, string[]>): number {
  // The keys already given, per record (one array a record, not one a trigram). A record's rows
  // come one after another (valueRows), so the last record's array is usually the one.
  const given = new Map<string, number[]>();
  let record: string | undefined;
  let keys: number[] = [];
  // A batch holds a few scopes: hashed once each, and looked up again only when the scope changes.
  const scopes = new Map<string, KeyScope>();
  let [ws, type, field] = ['', '', ''];
  let scope: KeyScope | undefined;
  let added = 0;
  for (const r of rows) {
    if (!fields.has(r.field) || r.value_text === null) continue;
    if (r.record_id !== record) {
      record = r.record_id;
      const had = given.get(record);
      if (had === undefined) given.set(record, (keys = []));
      else keys = had;
    }
    if (scope === undefined || r.workspace_id !== ws || r.object_type !== type || r.field !== field) {
      [ws, type, field] = [r.workspace_id, r.object_type, r.field];
      const sk = `${ws}\u0000${type}\u0000${field}`;
      scope = scopes.get(sk);
      if (scope === undefined) scopes.set(sk, (scope = keyScope(ws, type, field)));
    }
    const from = keys.length;
    addTrigramKeys(scope, r.value_text, keys);
    for (let i = from; i < keys.length; i++) {
      const k = keys[i]!;
      const ids = byKey.get(k);
      if (ids === undefined) byKey.set(k, [r.record_id]);
      else ids.push(r.record_id);
    }
    added += keys.length - from;
  }
  return added;
}
