// Inserts into a ranked scope (docs/pages.md §Creates that only insert). A transaction that took
// the scope for inserts (lockScope 'insert', PostgreSQL, an API write) does not move the counts
// of the entries holding its keys: it adds a count delta per entry and level, a row of its own,
// so that concurrent creates of one scope neither wait for one another's lock nor update one row.
// Readers add the deltas to the counts. After COMMIT, a leaf the create took past its maximum is
// split, and once a scope has gathered enough deltas they are folded in, each under the scope's
// exclusive lock in a transaction of its own. Any other transaction goes through rankChange.
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { afterCommit, deferred, deferredRows, markGroupable } from './pipeline.ts';
import { growStatements } from './rank-grow.ts';
import { Builder, type Stmt } from './rank-sql.ts';
import type { Database, Executor } from './types.ts';
import { heldMode, lockScope } from './rank-lock.ts';
import { LEVELS, type RankDef, type RankKey, rankSizes, scopeKey } from './rank-def.ts';
import { type Entry, rankChange } from './rank-write.ts';

const CHUNK = 400;

interface Leaf extends Entry {
  /** The leaf's level-0 delta rows this transaction saw, its own not counted. */
  pending: number;
}

// Upkeep of a scope after creates: the split of a leaf past its maximum and the fold of the
// deltas. Nobody sees its result (pages are exact either way), so no create waits for it; one
// transaction at a time per scope in this process, and creates that ask meanwhile add their
// leaves to the next one. When creates waited for it, and each asked for a transaction of its own,
// they made a convoy of them: 13% more transactions than creates, and a create's p99 of 160 ms
// under mixed load (docs/performance.md §Creates side by side).
interface Upkeep {
  leaves: Map<string, Entry>;
  fold: boolean;
  running?: Promise<void>;
}
const upkeep = new Map<string, Upkeep>();

function keep(db: Kysely<Database>, def: RankDef, values: readonly string[], leaves: readonly Entry[], fold: boolean): Promise<void> {
  const scope = scopeKey(def, values);
  let u = upkeep.get(scope);
  if (!u) upkeep.set(scope, (u = { leaves: new Map(), fold: false }));
  for (const e of leaves) u.leaves.set(`${e.lo_ts}\u0000${e.lo_id}`, e);
  u.fold ||= fold;
  u.running ??= runUpkeep(db, def, values, scope, u);
  return u.running;
}

async function runUpkeep(db: Kysely<Database>, def: RankDef, values: readonly string[], scope: string, u: Upkeep): Promise<void> {
  try {
    while (u.leaves.size > 0 || u.fold) {
      const out = [...u.leaves.values()];
      u.leaves.clear();
      u.fold = false;
      // Taken for writes, the scope's deltas are folded in first, so the splits count exact rows;
      // nothing is awaited, so all of it goes out with COMMIT (src/db/rank-grow.ts).
      await db.transaction().execute(async (t) => {
        await lockScope(t, def, values);
        for (const e of out) for (const stmt of growStatements(def, scope, values, e)) await deferred(t, { compile: () => stmt });
      });
    }
  } finally {
    u.running = undefined;
    if (u.leaves.size === 0 && !u.fold) upkeep.delete(scope);
  }
}

// The append as one statement, its text built once per number of keys: the scope's base entries
// (a new scope has none yet: a key then falls in the base, lo ''), each key's entry on every level
// found through the primary key, the deltas, and the leaf's count as this transaction sees it (its
// own keys included) with the leaf's pending delta rows, for the check after COMMIT. One
// statement instead of four, and no query building per create (docs/performance.md §Creates side
// by side, and batches written at once). The scope's pending rows are estimated as the leaf's
// times LEVELS (every create adds one row per level, and creates land in the newest leaf): read
// in the scan that sums the leaf's deltas, instead of counting every pending row of the scope,
// which cost PostgreSQL about a fifth of a create (docs/performance.md §Fewer statements per create).
const appendText = new Map<number, Stmt>();

function appendStatement(keys: number): Stmt {
  let stmt = appendText.get(keys);
  if (stmt) return stmt;
  const b = new Builder(true);
  const S = b.p('scope');
  const bases = Array.from({ length: LEVELS }, (_, l) => `(${S}, ${l}, '', '', 0)`).join(', ');
  const k = Array.from({ length: keys }, (_, i) => `(cast(${b.p(`ts${i}`)} as text), cast(${b.p(`id${i}`)} as text))`).join(', ');
  stmt = b.done(`with base as (insert into rank_buckets (scope, level, lo_ts, lo_id, n) values ${bases} on conflict (scope, level, lo_ts, lo_id) do nothing),
    k(ts, id) as (values ${k}),
    e as (select l.level, coalesce(x.lo_ts, '') as lo_ts, coalesce(x.lo_id, '') as lo_id from k cross join generate_series(0, ${LEVELS - 1}) l(level)
      left join lateral (select b.lo_ts, b.lo_id from rank_buckets b where b.scope = ${S} and b.level = l.level and (b.lo_ts, b.lo_id) <= (k.ts, k.id)
        order by b.lo_ts desc, b.lo_id desc limit 1) x on true),
    g as (select level, lo_ts, lo_id, cast(count(*) as integer) as d from e group by level, lo_ts, lo_id),
    ins as (insert into rank_deltas (scope, level, lo_ts, lo_id, d) select ${S}, level, lo_ts, lo_id, d from g)
    select g.lo_ts, g.lo_id, coalesce(b.n, 0) + g.d + coalesce(x.d, 0) as n, coalesce(x.rows, 0) as pending
    from g left join rank_buckets b on b.scope = ${S} and b.level = 0 and b.lo_ts = g.lo_ts and b.lo_id = g.lo_id
      left join lateral (select sum(x.d) as d, count(*) as rows from rank_deltas x where x.scope = ${S} and x.level = 0 and x.lo_ts = g.lo_ts and x.lo_id = g.lo_id) x on true
    where g.level = 0`);
  appendText.set(keys, stmt);
  return stmt;
}

function appendQuery(scope: string, keys: readonly RankKey[]): Compilable<Leaf> {
  const args: Record<string, unknown> = { scope };
  keys.forEach((key, i) => ((args[`ts${i}`] = key.ts), (args[`id${i}`] = key.id)));
  const stmt = appendStatement(keys.length);
  // It inserts the scope's base entries (if missing) and its own deltas, and updates nothing.
  return {
    compile: () =>
      markGroupable(
        CompiledQuery.raw(
          stmt.sql,
          stmt.args.map((a) => args[a]),
        ),
      ),
  };
}

/** The keys were inserted in this transaction (rows that were not there before). */
export async function rankInsert(tx: Executor, def: RankDef, values: readonly string[], keys: readonly RankKey[]): Promise<void> {
  const scope = scopeKey(def, values);
  if (keys.length === 0) return;
  if (heldMode(tx, scope) !== 'insert') return rankChange(tx, def, values, { added: keys });
  const leaves: { readonly rows?: Leaf[] }[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) leaves.push(await deferredRows(tx, appendQuery(scope, keys.slice(i, i + CHUNK))));
  afterCommit(
    tx,
    async (db) => {
      const seen = leaves.flatMap((l) => l.rows ?? []).map((r) => ({ lo_ts: r.lo_ts, lo_id: r.lo_id, n: Number(r.n), pending: Number(r.pending) }));
      const out = seen.filter((e) => e.n > rankSizes().leaf.max);
      const fold = seen.some((r) => r.pending * LEVELS >= rankSizes().fold);
      if (out.length > 0 || fold) await keep(db, def, values, out, fold);
    },
    { wait: false },
  );
}

/** Resolves once no upkeep runs in this process: before its database closes, and for tests that check the index. */
export async function rankUpkeepSettled(): Promise<void> {
  for (;;) {
    const running = [...upkeep.values()].flatMap((u) => (u.running ? [u.running] : []));
    if (running.length === 0) return;
    await Promise.allSettled(running);
  }
}
