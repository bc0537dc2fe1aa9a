// SQL of filtered record listings (docs/filtering.md §Plans): the statements of a plan, built from
// its atoms, and their runs. Every value a filter carries is a bound parameter; only fixed
// fragments of this file are SQL text. A listing's reads may go through every match of its filters,
// so they are sent as scans (src/db/scan.ts): on PostgreSQL a slow one never holds up the point
// reads of other requests.
import { type RawBuilder, sql } from 'kysely';
import { eachByKey, jsonTextElements, probeEnd, scan, type Executor } from '../../db/index.ts';
import type { Page } from '../../lib/paging.ts';
import { fieldHash, likeLiteral, prefixEnd, trigramKey } from '../index/trigrams.ts';

/** A condition on one value-index row `v` of a field. */
export type ValueCond =
  | { op: 'equal'; text: string }
  | { op: 'startsWith'; text: string }
  /**
   * `end`: a row also matches when it ends with it (an address's key ends where its domain's final
   * dot would follow, docs/filtering.md §Matching). `inner`: the text matches only before a row's
   * last character (the space that ends an address's row written with its final dot is no part of
   * the address, docs/records.md §E-mail addresses).
   */
  | { op: 'contains'; text: string; end?: string; inner?: boolean }
  | { op: 'set' }
  | { op: 'num'; eq?: number; gt?: number; ge?: number; lt?: number; le?: number };

/**
 * One positive condition of a plan: a field's values or a relationship's ids. An inverse one reads
 * the rows named `name` of `id`, which must be a record of `sourceType`: other types name their
 * relationships by the same keys (a contact's and a note's `$account`).
 */
export type Atom =
  | { kind: 'values'; field: string; cond: ValueCond; multiRow: boolean; trigram?: string }
  | { kind: 'own'; name: string; id: string }
  | { kind: 'inverse'; name: string; sourceType: string; id: string };

/** The records of one type in one workspace, which a filter reads. */
export interface TypeInWorkspace {
  workspaceId: string;
  objectType: string;
}

function valueCond(c: ValueCond): RawBuilder<unknown> {
  switch (c.op) {
    case 'equal':
      return sql`v.value_text = ${c.text}`;
    case 'contains':
      // Said outright: SQLite's planner does not infer it from LIKE, and the text index holds only
      // rows that have a text (migration 0025).
      return c.end === undefined
        ? sql`v.value_text is not null and v.value_text like ${`%${likeLiteral(c.text)}%${c.inner ? '_' : ''}`} escape '\\'`
        : sql`v.value_text is not null and (v.value_text like ${`%${likeLiteral(c.text)}%`} escape '\\' or v.value_text like ${`%${likeLiteral(c.end)}`} escape '\\')`;
    case 'set':
      // A non-empty text: the part of the text index above the empty string.
      return sql`v.value_text > ''`;
    case 'startsWith': {
      // A range in code point order, the order of value_text on both databases (migration 0066).
      const end = prefixEnd(c.text);
      return end === null ? sql`v.value_text >= ${c.text}` : sql`v.value_text >= ${c.text} and v.value_text < ${end}`;
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

/** The key of a trigram's postings in one field of a type in a workspace. */
function keyOf(s: TypeInWorkspace, field: string, trigram: string): number {
  return trigramKey(fieldHash(s.workspaceId, s.objectType, field), trigram);
}

/**
 * Whether the id of an inverse atom is a record of the type whose rows it reads: a constant, which
 * both databases evaluate once per statement.
 */
function sourceOfType(a: Extract<Atom, { kind: 'inverse' }>): RawBuilder<unknown> {
  return sql`exists (select 1 from records s where s.id = ${a.id} and s.kind = ${a.sourceType})`;
}

/** The record ids of a key's packs (docs/filtering.md §Indexes, Packs), as `record_id`. */
function packedIds(db: Executor, key: number): RawBuilder<unknown> {
  return sql`select p.prefix || j.value as record_id from record_trigram_packs p cross join ${jsonTextElements(db, sql`p.tails`, 'j')} where p.key = ${key}`;
}

/** The ids of the records an atom holds, as `record_id` (distinct). Relationship drivers need a type check. */
export function driverSql(db: Executor, s: TypeInWorkspace, a: Atom): RawBuilder<unknown> {
  if (a.kind === 'own') return sql`select distinct e.source_id as record_id from entity_relationships e where e.target_id = ${a.id} and e.name = ${a.name}`;
  if (a.kind === 'inverse')
    return sql`select distinct e.target_id as record_id from entity_relationships e where e.source_id = ${a.id} and e.name = ${a.name} and ${sourceOfType(a)}`;
  const where = sql`v.workspace_id = ${s.workspaceId} and v.object_type = ${s.objectType} and v.field = ${a.field}`;
  if (a.cond.op === 'contains' && a.trigram !== undefined) {
    // Candidates from one trigram's postings and packs, each checked against its own values. A
    // record may be in both (a pack's stale id, then the trigram written again): `union` keeps it once.
    const key = keyOf(s, a.field, a.trigram);
    return sql`select c.record_id from (select g.record_id from record_trigrams g where g.key = ${key}
      union ${packedIds(db, key)}) c
      where exists (select 1 from record_values v where v.record_id = c.record_id and v.field = ${a.field} and ${valueCond(a.cond)}${probeEnd(db)})`;
  }
  return a.multiRow
    ? sql`select distinct v.record_id from record_values v where ${where} and ${valueCond(a.cond)}`
    : sql`select v.record_id from record_values v where ${where} and ${valueCond(a.cond)}`;
}

/** Whether the record `r.id` satisfies an atom, probing by record id (a probe per record, whatever the plan). */
export function checkSql(db: Executor, a: Atom): RawBuilder<unknown> {
  const end = probeEnd(db);
  if (a.kind === 'own')
    return sql`exists (select 1 from entity_relationships e where e.source_id = r.id and e.name = ${a.name} and e.target_id = ${a.id}${end})`;
  if (a.kind === 'inverse')
    return sql`exists (select 1 from entity_relationships e where e.source_id = ${a.id} and e.name = ${a.name} and e.target_id = r.id and ${sourceOfType(a)}${end})`;
  return sql`exists (select 1 from record_values v where v.record_id = r.id and v.field = ${a.field} and ${valueCond(a.cond)}${end})`;
}

function toNumber(v: unknown): number {
  return typeof v === 'string' ? Number(v) : (v as number);
}

/** Rows of `query`, counted up to `cap` (an index range read stops there). */
export async function cappedCount(db: Executor, query: RawBuilder<unknown>, cap: number): Promise<number> {
  const rows = await scan(db, sql<{ n: unknown }>`select count(*) as n from (${query} limit ${cap}) x`);
  return toNumber(rows[0]?.n);
}

/**
 * How many postings each of `trigrams` has in a field, in one statement: those of the posting
 * table counted up to `cap`, plus the ids of its packs (their kept counts, a few rows a key).
 */
export async function trigramCounts(db: Executor, s: TypeInWorkspace, field: string, trigrams: readonly string[], cap: number): Promise<Map<string, number>> {
  const probes = trigrams.map((t) => {
    const key = keyOf(s, field, t);
    return sql`select cast(${t} as text) as t, (select count(*) from (select 1 from record_trigrams g where g.key = ${key} limit ${cap}) x)
      + (select coalesce(sum(p.n), 0) from record_trigram_packs p where p.key = ${key}) as n`;
  });
  const rows = await scan(db, sql<{ t: string; n: unknown }>`${sql.join(probes, sql` union all `)}`);
  return new Map(rows.map((x) => [x.t, toNumber(x.n)]));
}

export async function count(db: Executor, query: RawBuilder<unknown>): Promise<number> {
  const rows = await scan(db, sql<{ n: unknown }>`select count(*) as n from (${query}) x`);
  return toNumber(rows[0]?.n);
}

export async function ids(db: Executor, query: RawBuilder<unknown>): Promise<string[]> {
  const rows = await scan(db, sql<{ id: string }>`${query}`);
  return rows.map((x) => x.id);
}

/** The ids of `query`, which gives each with the number of matches beside it (`n`); n is null when no row came. */
export async function counted(db: Executor, query: RawBuilder<unknown>): Promise<{ ids: string[]; n: number | null }> {
  const rows = await scan(db, sql<{ id: string; n: unknown }>`${query}`);
  return { ids: rows.map((x) => x.id), n: rows.length > 0 ? toNumber(rows[0]!.n) : null };
}

/**
 * The statements of a filtered page (docs/filtering.md §Plans).
 * - `negated`: only negated filters; the page walks the listing, the count is the type's total
 *   minus `excluded` (null: no filter at all).
 * - `driven`: a positive filter drives. `sorted` is the page sorted from every match, with the
 *   number of matches beside each id (`n`, a window count), so the matches are read and checked
 *   once for both; `count` counts them alone, for a page past the end. `indexCount`, when the
 *   driver needs no check, counts its index range alone; `walk(rows)` is then the page taken
 *   from the newest `rows` records of the type, each probed by the filter.
 */
export type FilterPlan =
  | { kind: 'negated'; page: RawBuilder<unknown>; excluded: RawBuilder<unknown> | null }
  | {
      kind: 'driven';
      sorted: RawBuilder<unknown>;
      count: RawBuilder<unknown>;
      indexCount: RawBuilder<unknown> | null;
      walk: (rows: number) => RawBuilder<unknown>;
    };

const orderOf = (page: Page) => sql`order by r.created_at desc, r.id desc limit ${page.limit} offset ${page.offset}`;
const inTypeOf = (s: TypeInWorkspace) => sql`r.workspace_id = ${s.workspaceId} and r.kind = ${s.objectType}`;
const notChecksOf = (db: Executor, negatives: readonly Atom[]) => negatives.map((a) => sql`not ${checkSql(db, a)}`);

/** The records `r` of the ids `d` a driver gives, the driver read first (docs/filtering.md §Plans). */
const recordsOf = (db: Executor, driver: RawBuilder<unknown>) => eachByKey(db, driver, 'record_id', 'records', ['id', 'workspace_id', 'kind', 'created_at']);

/**
 * Negation only: the type's records minus those matching any negated filter. The page walks the
 * listing index newest first and skips those; the count is the ranked total minus theirs, read
 * through `drivers` (the negated atoms, each with the trigram that reads it).
 */
export function negatedPlan(db: Executor, s: TypeInWorkspace, negatives: readonly Atom[], drivers: readonly Atom[], page: Page): FilterPlan {
  const inType = inTypeOf(s);
  const where = sql.join([inType, ...notChecksOf(db, negatives)], sql` and `);
  const pageSql = sql`select r.id from records r where ${where} ${orderOf(page)}`;
  if (negatives.length === 0) return { kind: 'negated', page: pageSql, excluded: null };
  const union = sql.join(
    drivers.map((a) => driverSql(db, s, a)),
    sql` union `,
  );
  // The excluded set is read whole, as a set: the planner keeps its choice of join there, where a
  // probe per id (recordsOf) would be one lookup for each of the set's records.
  return { kind: 'negated', page: pageSql, excluded: sql`select r.id from (${union}) d cross join records r where r.id = d.record_id and ${inType}` };
}

/**
 * The driver's index range read once; `checks` (the other positive atoms) and `negatives` probed
 * per candidate by record id. `alone`: nothing else to check, so counting the driver's index range
 * is the count.
 */
export function drivenPlan(
  db: Executor,
  s: TypeInWorkspace,
  input: { driver: Atom; checks: readonly Atom[]; negatives: readonly Atom[]; page: Page; alone: boolean },
): FilterPlan {
  const { driver, page } = input;
  const order = orderOf(page);
  const checks: RawBuilder<unknown>[] = [...input.checks.map((a) => checkSql(db, a)), ...notChecksOf(db, input.negatives)];
  const from = recordsOf(db, driverSql(db, s, driver));
  const where = sql.join([sql`r.id = d.record_id`, inTypeOf(s), ...checks], sql` and `);
  const probe = checkSql(db, driver);
  return {
    kind: 'driven',
    sorted: sql`select r.id, count(*) over () as n from ${from} where ${where} ${order}`,
    count: sql`select r.id from ${from} where ${where}`,
    indexCount: input.alone ? driverSql(db, s, driver) : null,
    walk: (rows) =>
      sql`select r.id from (select x.id, x.created_at from records x where x.workspace_id = ${s.workspaceId} and x.kind = ${s.objectType}
        order by x.created_at desc, x.id desc limit ${rows}) r where ${probe} ${order}`,
  };
}

/** How many records an atom's index range holds, counted up to `cap`: its selectivity. */
export function driverCount(db: Executor, s: TypeInWorkspace, a: Atom, cap: number): Promise<number> {
  return cappedCount(db, driverSql(db, s, a), cap);
}
