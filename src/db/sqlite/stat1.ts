// The sqlite_stat1 rows that `ANALYZE index` writes under `pragma analysis_limit`, computed from
// reads alone (docs/design.md §Database statistics). ANALYZE holds the write lock while it counts
// every entry of the index, however small its sample; these reads hold no lock, so another
// process's writes go on while an index of millions of entries is counted, and only the rows'
// short write takes the lock.
//
// SQLite's analysis reads the index in order and, for each key column, counts the distinct values
// of the prefix ending at it. Past `limit` entries it stops if the first column has shown two
// values; if it has shown one, it seeks past that value, steps over the first entry there, and
// reads up to `limit` more. The row is the index's entry count (or the entries read, when it read
// them all) followed by, per key column, the entries one value of that prefix matches: (entries
// read + distinct - 1) / distinct, written as 1 when that is 2 and the true average is at most
// 1.1. This module repeats that walk with plain SELECTs; test/db/sqlite-stat1.test.ts compares its
// rows with those of the SQLite Node.js bundles on random tables. An index it cannot read that way
// (an expression, a collation or an order other than the default) is left to ANALYZE.
import { type Kysely, type RawBuilder, sql } from 'kysely';

/** A row of sqlite_stat1: `stat` null when ANALYZE writes none (an empty index or table). */
export interface Stat1Row {
  tbl: string;
  idx: string | null;
  stat: string | null;
}

interface IndexInfo {
  name: string;
  origin: string;
  partial: number;
}

async function query<T>(db: Kysely<any>, statement: RawBuilder<unknown>): Promise<T[]> {
  return (await sql<T>`${statement}`.execute(db)).rows;
}

/** What SQLite's analysis of an index sees: the key columns it compares and their order, its condition. */
async function shape(db: Kysely<any>, table: string, index: IndexInfo) {
  const cols = await query<{ name: string | null; cid: number; desc: number; coll: string; key: number }>(
    db,
    sql`select name, cid, "desc", coll, key from pragma_index_xinfo(${index.name}) order by seqno`,
  );
  const keys = cols.filter((c) => c.key === 1);
  if (keys.some((c) => c.cid < 0 || c.name === null || c.desc !== 0 || c.coll !== 'BINARY')) return undefined;
  const [meta] = await query<{ wr: number }>(db, sql`select wr from pragma_table_list(${table})`);
  const primary = meta?.wr === 1 && index.origin === 'pk';
  let where = '';
  if (index.partial) {
    const [def] = await query<{ sql: string }>(db, sql`select sql from sqlite_schema where type = 'index' and name = ${index.name}`);
    const found = /\swhere\s([\s\S]+)$/i.exec(def?.sql ?? '');
    if (!found) return undefined;
    where = found[1]!;
  }
  return {
    columns: keys.map((c) => sql.id(c.name!)),
    // A WITHOUT ROWID table's primary key is the table: its row is named after the table.
    idx: primary ? table : index.name,
    from: primary ? sql.id(table) : sql`${sql.id(table)} indexed by ${sql.id(index.name)}`,
    where,
  };
}

/** What SQLite's stat_push counts per key column (the distinct prefixes), fed the entries in index order. */
class Walk {
  readonly distinctAfter: number[];
  readonly width: number;
  read = 0;
  #previous: unknown[] | undefined;

  constructor(width: number) {
    this.width = width;
    this.distinctAfter = new Array<number>(width).fill(0);
  }

  push(entry: unknown[]): void {
    if (this.#previous !== undefined) {
      let changed = 0;
      while (changed < this.width && same(entry[changed], this.#previous[changed])) changed++;
      for (let i = changed; i < this.width; i++) this.distinctAfter[i]!++;
    }
    this.#previous = entry;
    this.read++;
  }
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  return a === b;
}

/** stat_get's text for the walk, `entries` being the index's count. */
function statText(w: Walk, entries: number, skipped: boolean): string {
  const parts = [String(skipped ? entries : w.read)];
  for (const d of w.distinctAfter) {
    const value = Math.floor((w.read + d) / (d + 1));
    // An average of at most 1.1 entries per value is written as 1.
    parts.push(String(value === 2 && w.read * 10 <= (d + 1) * 11 ? 1 : value));
  }
  return parts.join(' ');
}

/**
 * The sqlite_stat1 row of `index`, as `ANALYZE index` with `pragma analysis_limit = limit` would
 * write it; `undefined` when it must be left to ANALYZE.
 */
export async function sampledStat(db: Kysely<any>, table: string, index: IndexInfo, limit: number): Promise<Stat1Row | undefined> {
  const s = await shape(db, table, index);
  if (!s) return undefined;
  const from = s.from;
  const partial = s.where ? [sql`(${sql.raw(s.where)})`] : [];
  const where = (conds: RawBuilder<unknown>[]) => (conds.length ? sql` where ${sql.join(conds, sql` and `)}` : sql``);
  // Without a condition SQLite counts the B-tree's cells page by page, as ANALYZE does.
  const [counted] = await query<{ n: number }>(db, sql`select count(*) as n from ${from}${where(partial)}`);
  const entries = Number(counted?.n ?? 0);
  // An empty index gets no row, unless it is partial: then one of zeros.
  if (entries === 0) return { tbl: table, idx: s.idx, stat: s.where ? Array.from({ length: s.columns.length + 1 }, () => '0').join(' ') : null };
  const columns = sql.join(s.columns);
  const walk = new Walk(s.columns.length);
  const take = async (conds: RawBuilder<unknown>[], n: number, offset = 0) => {
    const got = await query<Record<string, unknown>>(db, sql`select ${columns} from ${from}${where(conds)} order by ${columns} limit ${n} offset ${offset}`);
    for (const r of got) walk.push(Object.values(r));
    return got;
  };
  const first = await take(partial, limit + 1);
  let skipped = false;
  if (first.length > limit) {
    skipped = true;
    // Past the limit with one value of the first column so far, the analysis seeks to the first
    // entry past that value, steps to the next one (the sought entry itself is not read) and
    // reads up to `limit` more entries.
    if (walk.distinctAfter[0] === 0) {
      const v = Object.values(first.at(-1)!)[0];
      const lead = s.columns[0]!;
      await take([...partial, v === null ? sql`${lead} is not null` : sql`${lead} > ${v}`], limit, 1);
    }
  }
  return { tbl: table, idx: s.idx, stat: statText(walk, entries, skipped) };
}

/** The row ANALYZE writes for a table's own count (one with no index but partial ones). */
export async function tableStat(db: Kysely<any>, table: string): Promise<Stat1Row> {
  const [counted] = await query<{ n: number }>(db, sql`select count(*) as n from ${sql.id(table)}`);
  const n = Number(counted?.n ?? 0);
  return { tbl: table, idx: null, stat: n === 0 ? null : String(n) };
}
