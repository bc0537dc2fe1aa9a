// Pages of a ranked set minus some of its subsets (docs/pages.md §Differences of sets): the rows of
// an outer partition that are in none of a few inner partitions, whose rows are rows of the outer
// one under the same key (a task listing without the tasks of one status). Nothing is kept for the
// difference: its size is the outer size minus the inner sizes (the inner sets are disjoint), and
// its row at offset k is found by counting. For an outer offset o, h(o) = o − (inner rows newer
// than the outer row at o) is the number of difference rows newer than that row; h never
// decreases, so the offset of the k-th row lies between an o with h(o) ≤ k and one with h(o) > k.
// The search narrows that bracket by probes (a seek in the outer set, a count in each inner set,
// both bounded like a page), guessing where the row lies from the density of the bracket, until it
// is short; then one bounded walk of the outer rows from the bracket's start, each probed against
// the inner sets by key, gives the page. A walk that runs out before the page is full (a run of
// inner rows longer than expected) searches again for the rest. Statements that need no answer of
// one another go out as one batch (the two probes either side of a guess), so that on PostgreSQL
// a deep page waits for three round trips: the sizes, the probes, the walk (docs/pages.md §Differences of sets).
import { LEVELS, type RankDef } from './def.ts';
import { type ExceptBatch, type Key, levelSum, partitionArgs, probe, type RankPartition, type Row } from './except-probe.ts';
import { Builder, cached, inPartition, q, type SqlitePageStep, type Stmt } from './sql.ts';

export type { ExceptBatch, RankPartition } from './except-probe.ts';

export interface ExceptResult {
  total: number;
  rows: Row[];
}
type Steps = Generator<ExceptBatch, ExceptResult, Row[][]>;

/**
 * A bracket at most `within` outer rows wide is walked rather than searched further; a walk's length
 * is rounded up to a multiple of `unit`. A page whose offset plus limit is at most `first` is first
 * tried as one statement on PostgreSQL (`firstPagePostgres`). Tests make them tiny, so that walks run out.
 */
export const EXCEPT_WALK = { within: 512, unit: 128, first: 256 };
/** Probes of one search; a search halves its bracket at least every second probe, so 2⁵³ rows need fewer. */
const MAX_PROBES = 120;

/** The partitions' sizes, one column each (`n0`, `n1`, …). */
function totalsSql(defs: readonly RankDef[], b: Builder): string {
  return `select ${defs.map((d, i) => `cast(${levelSum(d, b.pg, b.p(`s${i}`), LEVELS - 1, 'true')} as bigint) as n${i}`).join(', ')}`;
}

function totalsStmt(defs: readonly RankDef[], pg: boolean): Stmt {
  const b = new Builder(pg);
  return b.done(totalsSql(defs, b));
}

/**
 * The outer rows from the key (x_ts, x_id) down, or from the newest (`top`), at most `cap` of them,
 * that no inner partition holds, after skipping `skip` such rows: each outer row is looked up in
 * each inner set by its key. On PostgreSQL a named statement gets a generic plan, planned without
 * its values: `cap` is written into the text (rounded up, so that few texts exist) so that the
 * stretch is always an index range read newest first and cut there, and each lookup ends with
 * `offset 0` so that it stays a lookup per row rather than becoming a join over the inner set
 * (docs/filtering.md §Plans).
 */
function walkSql(b: Builder, outer: RankDef, inner: readonly RankDef[], cap: number, top: boolean): string {
  const [T, ts, id] = [q(outer.table), `t.${q(outer.ts)}`, `t.${q(outer.id)}`];
  const absent = inner.map((d, i) => {
    const by = d.by.map((c, j) => `s.${q(c)} = ${b.p(`i${i}by${j}`)}`);
    Object.keys(d.where ?? {}).forEach((c, j) => by.push(`s.${q(c)} = ${b.p(`i${i}where${j}`)}`));
    return `not exists (select 1 from ${q(d.table)} s where ${by.join(' and ')} and s.${q(d.ts)} = w.rank_ts and s.${q(d.id)} = w.rank_id${b.pg ? ' offset 0' : ''})`;
  });
  const from = top ? '' : ` and (${ts}, ${id}) <= (${b.p('x_ts')}, ${b.p('x_id')})`;
  const stretch = `select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${inPartition(outer, b)}${from}
      order by ${ts} desc, ${id} desc limit ${cap}`;
  return `select w.rank_ts, w.rank_id from (${stretch}) w where ${absent.join(' and ')}
      order by w.rank_ts desc, w.rank_id desc limit ${b.p('limit')} offset ${b.p('skip')}`;
}

const names = (inner: readonly RankDef[]) => inner.map((d) => d.name).join(',');

function walkStmt(outer: RankDef, inner: readonly RankDef[], pg: boolean, cap: number, top: boolean): Stmt {
  return cached(outer, `except:walk:${pg}:${cap}:${top}:${names(inner)}`, () => {
    const b = new Builder(pg);
    return b.done(walkSql(b, outer, inner, cap, top));
  });
}

/** A walk's length: `least` rounded up to a multiple of `unit`, or past 16 units to a power of two. */
function walkCap(least: number): number {
  const { unit } = EXCEPT_WALK;
  return least <= 16 * unit ? unit * Math.ceil(least / unit) : 2 ** Math.ceil(Math.log2(least));
}

function walkArgs(outer: RankPartition, inner: readonly RankPartition[], scopes: readonly string[]): Record<string, unknown> {
  const args = partitionArgs(outer, '', scopes[0]!);
  inner.forEach((p, i) => Object.assign(args, partitionArgs(p, `i${i}`, scopes[i + 1]!)));
  return args;
}

/**
 * PostgreSQL, a page near the top (offset + limit at most EXCEPT_WALK.first): one statement, so one
 * snapshot without a transaction, holding the sizes (`n0`, `n1`, …) and a walk from the newest
 * outer row twice as long as the page's end, enough whenever at least half the outer rows are in
 * no inner set. `firstPageRows` says whether it held the page; if not, the caller reads it by
 * exceptSteps. Undefined for a deeper page.
 */
export function firstPagePostgres(
  outer: RankPartition,
  inner: readonly RankPartition[],
  page: { offset: number; limit: number },
  scopeOf: (p: RankPartition) => string,
): SqlitePageStep | undefined {
  const end = page.offset + page.limit;
  if (end > EXCEPT_WALK.first) return undefined;
  const defs = inner.map((p) => p.def);
  const cap = walkCap(2 * end);
  const stmt = cached(outer.def, `except:first:${cap}:${names(defs)}`, () => {
    const b = new Builder(true);
    const totals = totalsSql([outer.def, ...defs], b);
    const walk = walkSql(b, outer.def, defs, cap, true);
    return b.done(`with tot as (${totals}), walk as (${walk})
      select tot.*, walk.rank_ts, walk.rank_id from tot left join walk on true order by walk.rank_ts desc, walk.rank_id desc`);
  });
  const scopes = [outer, ...inner].map(scopeOf);
  const args = { ...walkArgs(outer, inner, scopes), ...Object.fromEntries(scopes.map((s, i) => [`s${i}`, s])), skip: page.offset, limit: page.limit };
  return { stmt, args };
}

/** The page firstPagePostgres read, or undefined when its walk ran out before the page's end. */
export function firstPageRows(found: readonly Row[], page: { offset: number; limit: number }, inner: number): ExceptResult | undefined {
  const sizes = found[0] ?? {};
  const all = Number(sizes.n0 ?? 0);
  const total = all - Array.from({ length: inner }, (_, i) => Number(sizes[`n${i + 1}`] ?? 0)).reduce((x, y) => x + y, 0);
  const rows = found.filter((r) => r.rank_id !== null).map((r) => ({ rank_ts: r.rank_ts, rank_id: r.rank_id }));
  const want = Math.max(0, Math.min(page.limit, total - page.offset));
  // A walk covering every outer row holds the page whatever its length.
  return rows.length >= want || all <= walkCap(2 * (page.offset + page.limit)) ? { total, rows } : undefined;
}

/** The batches' statements one after another (SQLite, where every statement is answered as it runs). */
export function* oneByOne(batches: Steps): Generator<SqlitePageStep, ExceptResult, Row[]> {
  let next = batches.next();
  while (!next.done) {
    const answers: Row[][] = [];
    for (const step of next.value.steps) answers.push(yield step);
    next = batches.next(answers);
  }
  return next.value;
}

/**
 * The page at `page.offset` of the outer partition without the inner ones, newest first, and the
 * difference's size, as batches of statements run in one snapshot (src/db/rank/index.ts). The
 * inner partitions are disjoint and every row of each is an outer row with the same key.
 */
export function* exceptSteps(
  outer: RankPartition,
  inner: readonly RankPartition[],
  page: { offset: number; limit: number },
  pg: boolean,
  scopeOf: (p: RankPartition) => string,
): Steps {
  const scopes = [outer, ...inner].map(scopeOf);
  const [sizeRows] = yield {
    steps: [
      {
        stmt: totalsStmt(
          [outer, ...inner].map((p) => p.def),
          pg,
        ),
        args: Object.fromEntries(scopes.map((s, i) => [`s${i}`, s])),
      },
    ],
  };
  const sizes = sizeRows![0] ?? {};
  const [all, ...held] = scopes.map((_s, i) => Number(sizes[`n${i}`] ?? 0));
  const innerRows = held.reduce((x, y) => x + y, 0);
  const total = all! - innerRows;
  const want = Math.max(0, Math.min(page.limit, total - page.offset));
  const rows: Row[] = [];
  // Bracket [a, b) of outer offsets with h(a) = ha ≤ k < hb = h(b); h(0) = 0, h(all) = total.
  let [a, ha, keyA] = [0, 0, null as Key | null];
  let [b, hb] = [all!, total];
  let k = page.offset;
  while (rows.length < want) {
    if (hb <= k) [b, hb] = [all!, total];
    let lastWidth = b - a;
    let slow = 0;
    for (let probes = 0; b - a > EXCEPT_WALK.within && probes < MAX_PROBES; probes++) {
      // Interpolated from the bracket's density, then placed a margin past the guess on the far
      // side, so that the probe usually becomes that end and leaves a bracket of about the margin.
      // On PostgreSQL, where each batch is a round trip, the near side is probed in the same batch,
      // so that the two usually become both ends; on SQLite a probe costs its statements alone.
      const guess = a + ((k - ha + 0.5) * (b - a)) / (hb - ha);
      const margin = EXCEPT_WALK.within / 4;
      const place = (o: number) => Math.min(b - 1, Math.max(a + 1, Math.min(k + innerRows, Math.max(k, Math.round(o)))));
      const far = guess - a > b - guess ? guess - margin : guess + margin;
      const near = pg ? [guess - margin, guess + margin].filter((o) => o > a && o < b) : [far];
      // A round that did not halve the bracket makes the next one bisect it: a row just past a run
      // of inner rows draws each guess short of it by about the margin (docs/pages.md §Differences of sets).
      const os = slow >= 1 || near.length === 0 ? [place((a + b) / 2)] : [...new Set(near.map(place))];
      probes += os.length - 1;
      for (const { o, key, newer } of yield* probe(outer, inner, scopes, held, pg, os)) {
        const h = o - newer;
        if (h <= k && o > a) [a, ha, keyA] = [o, h, key];
        else if (h > k && o < b) [b, hb] = [o, h];
      }
      slow = b - a > lastWidth / 2 ? slow + 1 : 0;
      lastWidth = b - a;
    }
    // The k-th row is within [a, b); the page's other rows follow it at the difference's density.
    // Without a probe below it, a is 0 and the walk starts at the newest row.
    const cap = walkCap(b - a + Math.ceil((2 * (want - rows.length) * all!) / Math.max(total, 1)) + want);
    const args: Record<string, unknown> = { ...walkArgs(outer, inner, scopes), skip: k - ha, limit: want - rows.length };
    if (keyA) Object.assign(args, { x_ts: keyA.ts, x_id: keyA.id });
    const defs = inner.map((p) => p.def);
    const [got] = yield { steps: [{ stmt: walkStmt(outer.def, defs, pg, cap, keyA === null), args }], last: true };
    // The k-th row lies within the walk (cap ≥ b − a), so a walk that finds nothing means the counts are wrong.
    if (got!.length === 0) throw new Error(`rank ${outer.def.name}: the counts of ${scopes.join(', ')} are out of step with their rows`);
    rows.push(...got!);
    k += got!.length;
  }
  return { total, rows };
}
