// One ranked partition's entries in a transaction that may move them (docs/pages.md §Keeping it
// exact): counts moved per key, entries split when they grow past their maximum and merged into
// the entry below when they shrink under their minimum, the levels above kept in shape the same
// way, counting entries below instead of rows. The caller holds the partition's lock exclusively
// (on PostgreSQL), or is SQLite's one writer.
import { type RawBuilder, sql } from 'kysely';
import { deferred } from '../pipeline.ts';
import type { Tx } from '../types.ts';
import { LEVELS, type RankKey, type RankDef, rankSizes, partitionKey } from './def.ts';
import { addParts, mergeParts, recountParts, rowPart } from './parts.ts';
import { build, col, int, pieces, partitionRows } from './build.ts';

export interface Entry {
  lo_ts: string;
  lo_id: string;
  n: number;
}

export const outOfBounds = (e: Entry) => e.n > rankSizes().leaf.max || (e.n < rankSizes().leaf.min && e.lo_ts !== '');

export class Partition {
  readonly tx: Tx;
  readonly def: RankDef;
  readonly values: readonly string[];
  readonly scope: string;

  constructor(tx: Tx, def: RankDef, values: readonly string[]) {
    this.tx = tx;
    this.def = def;
    this.values = values;
    this.scope = partitionKey(def, values);
  }

  async ensureBase(): Promise<void> {
    const rows = Array.from({ length: LEVELS }, (_, l) => sql`(${this.scope}, ${int(l)}, '', '', 0)`);
    await deferred(
      this.tx,
      sql`insert into rank_buckets (scope, level, lo_ts, lo_id, n) values ${sql.join(rows)} on conflict (scope, level, lo_ts, lo_id) do nothing`,
    );
  }

  async total(): Promise<number> {
    const r = await sql<{
      total: number;
    }>`select coalesce(sum(n), 0) as total from rank_buckets where scope = ${this.scope} and level = ${int(LEVELS - 1)}`.execute(this.tx);
    return Number(r.rows[0]?.total ?? 0);
  }

  async rebuild(): Promise<void> {
    await deferred(this.tx, sql`delete from rank_buckets where scope = ${this.scope}`);
    if (this.def.part) await deferred(this.tx, sql`delete from rank_parts where scope = ${this.scope}`);
    await build(this.tx, this.def, this.values);
    await this.ensureBase();
  }

  /**
   * CTEs `k` (the keys) and `e` (for each key its entry on `level`: the highest lo <= key, with the
   * key's part). Written with one-column comparisons so that both databases find each entry through
   * the primary key (SQLite does not seek on a row value here).
   */
  locate(level: number, keys: readonly RankKey[]): RawBuilder<unknown> {
    const [s, l] = [this.scope, int(level)];
    const k = sql.join(keys.map((x) => sql`(cast(${x.ts} as text), cast(${x.id} as text), cast(${x.part ?? ''} as text))`));
    return sql`with k(ts, id, part) as (values ${k}),
      m as (select k.ts, k.part,
        (select b.lo_id from rank_buckets b where b.scope = ${s} and b.level = ${l} and b.lo_ts = k.ts and b.lo_id <= k.id order by b.lo_id desc limit 1) as same_id,
        (select b.lo_ts from rank_buckets b where b.scope = ${s} and b.level = ${l} and b.lo_ts < k.ts order by b.lo_ts desc limit 1) as prev_ts
        from k),
      e as (select case when same_id is not null then ts else prev_ts end as lo_ts,
        coalesce(same_id, (select max(b.lo_id) from rank_buckets b where b.scope = ${s} and b.level = ${l} and b.lo_ts = m.prev_ts)) as lo_id, part from m)`;
  }

  /** Without parts: adds `sign` per key to the entry holding it on `level`, returning the entries. */
  countUpdate(level: number, keys: readonly RankKey[], sign: 1 | -1): RawBuilder<Entry> {
    const [s, l] = [this.scope, int(level)];
    return sql<Entry>`${this.locate(level, keys)},
      g as (select lo_ts, lo_id, count(*) as c from e group by lo_ts, lo_id)
      update rank_buckets set n = n + ${int(sign)} * (select g.c from g where g.lo_ts = rank_buckets.lo_ts and g.lo_id = rank_buckets.lo_id)
      where scope = ${s} and level = ${l} and (lo_ts, lo_id) in (select lo_ts, lo_id from g)
      returning lo_ts, lo_id, n`;
  }

  /**
   * Adds `sign` per key to the entry holding it on `level` (and to its part); returns the entries
   * with their new n, unless `quiet` (then, without parts, the statement is deferred).
   */
  async count(level: number, keys: readonly RankKey[], sign: 1 | -1, quiet = false): Promise<Entry[]> {
    const [s, l] = [this.scope, int(level)];
    if (!this.def.part) {
      const update = this.countUpdate(level, keys, sign);
      if (quiet) {
        await deferred(this.tx, update);
        return [];
      }
      return (await update.execute(this.tx)).rows;
    }
    const found = await sql<{ lo_ts: string; lo_id: string; part: string; c: number }>`${this.locate(level, keys)}
      select lo_ts, lo_id, part, count(*) as c from e group by lo_ts, lo_id, part`.execute(this.tx);
    const byEntry = new Map<string, { lo_ts: string; lo_id: string; d: number }>();
    for (const x of found.rows) {
      const at = `${x.lo_ts}\u0000${x.lo_id}`;
      const e = byEntry.get(at) ?? { lo_ts: x.lo_ts, lo_id: x.lo_id, d: 0 };
      e.d += sign * Number(x.c);
      byEntry.set(at, e);
    }
    const v = sql.join([...byEntry.values()].map((x) => sql`(cast(${x.lo_ts} as text), cast(${x.lo_id} as text), ${int(x.d)})`));
    const r = await sql<Entry>`with v(lo_ts, lo_id, d) as (values ${v})
      update rank_buckets set n = n + (select v.d from v where v.lo_ts = rank_buckets.lo_ts and v.lo_id = rank_buckets.lo_id)
      where scope = ${s} and level = ${l} and (lo_ts, lo_id) in (select lo_ts, lo_id from v)
      returning lo_ts, lo_id, n`.execute(this.tx);
    await addParts(
      this.tx,
      s,
      level,
      found.rows.map((x) => ({ lo_ts: x.lo_ts, lo_id: x.lo_id, part: x.part, d: sign * Number(x.c) })),
    );
    return r.rows;
  }

  async exact(level: number, at: { lo_ts: string; lo_id: string }): Promise<Entry | undefined> {
    const r =
      await sql<Entry>`select lo_ts, lo_id, n from rank_buckets where scope = ${this.scope} and level = ${int(level)} and lo_ts = ${at.lo_ts} and lo_id = ${at.lo_id}`.execute(
        this.tx,
      );
    return r.rows[0];
  }

  /** The entry holding `at` on `level`: the highest lo <= at. */
  async containing(level: number, at: { lo_ts: string; lo_id: string }): Promise<Entry | undefined> {
    return this.neighbour(level, at, sql`<=`, sql`desc`);
  }

  async neighbour(level: number, at: { lo_ts: string; lo_id: string }, op: RawBuilder<unknown>, dir: RawBuilder<unknown>): Promise<Entry | undefined> {
    const r =
      await sql<Entry>`select lo_ts, lo_id, n from rank_buckets where scope = ${this.scope} and level = ${int(level)} and (lo_ts, lo_id) ${op} (${at.lo_ts}, ${at.lo_id})
      order by lo_ts ${dir}, lo_id ${dir} limit 1`.execute(this.tx);
    return r.rows[0];
  }

  /**
   * Keys in [e.lo, hi) on the given columns, as one or two branches to be read apart, each bounded
   * on both sides by its own columns: an index scan ends a row comparison's range only by its first
   * column, so `(ts, id) < hi` alone would read on through every key at hi's timestamp (an
   * imported block of one timestamp, to its end).
   */
  ranges(ts: RawBuilder<unknown>, id: RawBuilder<unknown>, e: Entry, hi: Entry | undefined): RawBuilder<unknown>[] {
    const from = sql`(${ts}, ${id}) >= (${e.lo_ts}, ${e.lo_id})`;
    if (!hi) return [from];
    if (hi.lo_ts === e.lo_ts) return [sql`${ts} = ${e.lo_ts} and ${id} >= ${e.lo_id} and ${id} < ${hi.lo_id}`];
    return [sql`${from} and ${ts} < ${hi.lo_ts}`, sql`${ts} = ${hi.lo_ts} and ${id} < ${hi.lo_id}`];
  }

  /** `select` (a statement ending in a condition) for each of the ranges of [e.lo, hi), in one. */
  inRange(select: (range: RawBuilder<unknown>) => RawBuilder<unknown>, ts: RawBuilder<unknown>, id: RawBuilder<unknown>, e: Entry, hi: Entry | undefined) {
    return sql.join(this.ranges(ts, id, e, hi).map(select), sql` union all `);
  }

  /** Rows (level 0) or entries one level down (above) covered by `e`, as (partition, ts, id, w). */
  children(level: number, e: Entry, hi: Entry | undefined): RawBuilder<unknown> {
    if (level === 0) {
      const [ts, id] = [col('t', this.def.ts), col('t', this.def.id)];
      return this.inRange(
        (range) => sql`select ${this.scope} as scope, ${ts} as ts, ${id} as id, 1 as w from ${sql.table(this.def.table)} t
        where ${partitionRows(this.def, this.values)} and ${range}`,
        ts,
        id,
        e,
        hi,
      );
    }
    return this.inRange(
      (range) => sql`select scope, lo_ts as ts, lo_id as id, n as w from rank_buckets where scope = ${this.scope} and level = ${int(level - 1)} and ${range}`,
      sql.ref('lo_ts'),
      sql.ref('lo_id'),
      e,
      hi,
    );
  }

  /** Rows (level 0) or parts of the entries one level down, as (partition, ts, id, part, w), in [e.lo, hi). */
  partChildren(level: number, e: Entry, hi: Entry | undefined): RawBuilder<unknown> {
    if (level === 0) {
      const [ts, id] = [col('t', this.def.ts), col('t', this.def.id)];
      return this.inRange(
        (
          range,
        ) => sql`select cast(${this.scope} as text) as scope, ${ts} as ts, ${id} as id, ${rowPart(this.def)} as part, 1 as w from ${sql.table(this.def.table)} t
        where ${partitionRows(this.def, this.values)} and ${range}`,
        ts,
        id,
        e,
        hi,
      );
    }
    return this.inRange(
      (range) =>
        sql`select scope, lo_ts as ts, lo_id as id, part, n as w from rank_parts where scope = ${this.scope} and level = ${int(level - 1)} and ${range}`,
      sql.ref('lo_ts'),
      sql.ref('lo_id'),
      e,
      hi,
    );
  }

  /** Counts the parts of every entry of `level` in [e.lo, hi) again (after a split of e). */
  async recountRange(level: number, e: Entry, hi: Entry | undefined): Promise<void> {
    const entries = this.inRange(
      (range) => sql`select lo_ts, lo_id, n from rank_buckets where scope = ${this.scope} and level = ${int(level)} and ${range}`,
      sql.ref('lo_ts'),
      sql.ref('lo_id'),
      e,
      hi,
    );
    const r = await sql<Entry>`select * from (${entries}) x order by lo_ts, lo_id`.execute(this.tx);
    for (const [i, x] of r.rows.entries()) await recountParts(this.tx, this.scope, level, x, this.partChildren(level, x, r.rows[i + 1] ?? hi));
  }

  /** How many rows a statement of this partition's rows (`children`, or one of its own) yields. */
  async countOf(rows: RawBuilder<unknown>): Promise<number> {
    const r = await sql<{ c: number }>`select count(*) as c from (${rows}) x`.execute(this.tx);
    return Number(r.rows[0]?.c ?? 0);
  }

  /** Splits or merges the entry at `at` on `level` if it is out of bounds. */
  async check(level: number, at: { lo_ts: string; lo_id: string } | undefined): Promise<void> {
    const e = at && (await this.exact(level, at));
    if (!e) return;
    const bounds = level === 0 ? rankSizes().leaf : rankSizes().fanout;
    let size = e.n;
    if (level > 0) {
      const hi = await this.neighbour(level, e, sql`>`, sql`asc`);
      size = await this.countOf(this.children(level, e, hi));
    }
    if (size > bounds.max) await this.split(level, e);
    else if (size < bounds.min && e.lo_ts !== '') await this.merge(level, e);
  }

  /** Cuts `e` into pieces of about the target size; the first keeps e's lo. */
  async split(level: number, e: Entry): Promise<void> {
    const hi = await this.neighbour(level, e, sql`>`, sql`asc`);
    const target = level === 0 ? rankSizes().leaf.target : rankSizes().fanout.target;
    const r = await sql<{ n: number }>`${pieces(this.children(level, e, hi), target)}
      insert into rank_buckets (scope, level, lo_ts, lo_id, n)
      select r.scope, ${int(level)}, r.ts, r.id, f.n from f join r on r.scope = f.scope and r.rn = f.first where f.piece > 0
      returning n`.execute(this.tx);
    const moved = r.rows.reduce((sum, x) => sum + Number(x.n), 0);
    if (moved === 0) return;
    await this.add(level, e, -moved);
    if (this.def.part) await this.recountRange(level, e, hi);
    if (level + 1 < LEVELS) await this.check(level + 1, await this.containing(level + 1, e));
  }

  /** Removes e's boundary from its level and every level above that has it; the entries below
   *  each take over its range and count. */
  async merge(level: number, e: Entry): Promise<void> {
    for (let l = level; l < LEVELS; l++) {
      const x = l === level ? e : await this.exact(l, e);
      if (!x) break;
      const below = await this.neighbour(l, x, sql`<`, sql`desc`);
      if (!below) throw new Error(`rank ${this.def.name}: no entry below ${x.lo_ts}/${x.lo_id} in ${this.scope}`);
      await sql`delete from rank_buckets where scope = ${this.scope} and level = ${int(l)} and lo_ts = ${x.lo_ts} and lo_id = ${x.lo_id}`.execute(this.tx);
      await this.add(l, below, x.n);
      if (this.def.part) await mergeParts(this.tx, this.scope, l, x, below);
    }
    for (let l = level; l < LEVELS; l++) await this.check(l, await this.containing(l, e));
  }

  async add(level: number, e: { lo_ts: string; lo_id: string }, by: number): Promise<void> {
    await sql`update rank_buckets set n = n + ${int(by)} where scope = ${this.scope} and level = ${int(level)} and lo_ts = ${e.lo_ts} and lo_id = ${e.lo_id}`.execute(
      this.tx,
    );
  }
}
