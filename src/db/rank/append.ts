// Inserts into and deletes from a ranked partition (docs/pages.md §Creates that only insert). A
// transaction that took the partition for inserts (lockPartition 'insert', PostgreSQL, an API write)
// does not move the counts of the entries holding its keys: it adds a count delta per entry and
// level (+1 per key inserted, -1 per key deleted), a row of its own, so that concurrent creates and
// deletes of one partition neither wait for one another's lock nor update one row. Readers add the
// deltas to the counts. After COMMIT, a leaf a create took past its maximum is split, a leaf a
// delete took below its minimum is merged, and once a partition has gathered enough deltas they
// are folded in, each under the partition's exclusive lock in a transaction of its own. Any other
// transaction goes through rankChange.
import { type Compilable, CompiledQuery, type Kysely, sql } from 'kysely';
import { deferred, deferredRows, markGroupable } from '../pipeline.ts';
import { afterCommit, write } from '../write.ts';
import { growStatements } from './grow.ts';
import { Builder, type Stmt } from './sql.ts';
import type { Database, Tx } from '../types.ts';
import { heldMode, lockPartition } from './lock.ts';
import { noteLate } from './late.ts';
import { LEVELS, type RankDef, type RankKey, rankSizes, partitionKey } from './def.ts';
import type { Entry } from './partition.ts';
import { rankChange, rankCheckLeaves } from './write.ts';

const CHUNK = 400;

interface Leaf extends Entry {
  /** The leaf's level-0 delta rows this transaction saw, its own not counted. */
  pending: number;
}

// Upkeep of a partition after creates and deletes: the split of a leaf past its maximum, the merge
// of one below its minimum, and the fold of the deltas. Nobody sees its result (pages are exact either way), so no create waits for it; one
// transaction at a time per partition in this process, and creates that ask meanwhile add their
// leaves to the next one: creates that waited for it, each with a transaction of its own, would
// queue behind one another under mixed load (docs/performance.md §Creates side by side).
interface Upkeep {
  leaves: Map<string, Entry>;
  /** Leaves deletes took below their minimum, to merge. */
  small: Map<string, Entry>;
  fold: boolean;
  running?: Promise<void>;
}
const upkeep = new Map<string, Upkeep>();

function keep(
  db: Kysely<Database>,
  def: RankDef,
  values: readonly string[],
  found: { large?: readonly Entry[]; small?: readonly Entry[]; fold: boolean },
): Promise<void> {
  const scope = partitionKey(def, values);
  let u = upkeep.get(scope);
  if (!u) upkeep.set(scope, (u = { leaves: new Map(), small: new Map(), fold: false }));
  for (const e of found.large ?? []) u.leaves.set(`${e.lo_ts}\u0000${e.lo_id}`, e);
  for (const e of found.small ?? []) u.small.set(`${e.lo_ts}\u0000${e.lo_id}`, e);
  u.fold ||= found.fold;
  u.running ??= runUpkeep(db, def, values, scope, u);
  return u.running;
}

async function runUpkeep(db: Kysely<Database>, def: RankDef, values: readonly string[], scope: string, u: Upkeep): Promise<void> {
  try {
    while (u.leaves.size > 0 || u.small.size > 0 || u.fold) {
      const out = [...u.leaves.values()];
      const small = [...u.small.values()];
      u.leaves.clear();
      u.small.clear();
      const fold = u.fold;
      u.fold = false;
      // Taken for writes, the partition's deltas are folded in first, so the splits count exact rows;
      // nothing is awaited, so all of it goes out with COMMIT (src/db/rank/grow.ts).
      if (out.length > 0 || fold)
        await write(db, async (t) => {
          await lockPartition(t, def, values);
          for (const e of out) for (const stmt of growStatements(def, scope, values, e)) await deferred(t, { compile: () => stmt });
        });
      // A merge reads and moves neighbours, more than a statement of growStatements does: it runs
      // as rankChange's check does, each leaf read again (another writer may have fixed it).
      if (small.length > 0) await rankCheckLeaves(db, def, values, small);
    }
  } finally {
    u.running = undefined;
    if (u.leaves.size === 0 && u.small.size === 0 && !u.fold) upkeep.delete(scope);
  }
}

// The append as one statement, its text built once per number of keys: the partition's base entries
// (a new partition has none yet: a key then falls in the base, lo ''), each key's entry on every level
// found through the primary key, the deltas, and the leaf's count as this transaction sees it (its
// own keys included) with the leaf's pending delta rows, for the check after COMMIT. One
// statement instead of four, and no query building per create (docs/performance.md §Creates side
// by side, and batches written at once). The partition's pending rows are estimated as the leaf's
// times LEVELS (every create adds one row per level, and creates land in the newest leaf): read
// in the scan that sums the leaf's deltas, instead of counting every pending row of the partition,
// which cost PostgreSQL about a fifth of a create (docs/performance.md §Fewer statements per create).
const appendText = new Map<string, Stmt>();

/** The statement for `keys` keys, each counting `sign` (1: inserted, -1: deleted). */
function appendStatement(keys: number, sign: 1 | -1): Stmt {
  let stmt = appendText.get(`${keys}:${sign}`);
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
    g as (select level, lo_ts, lo_id, ${sign} * cast(count(*) as integer) as d from e group by level, lo_ts, lo_id),
    ins as (insert into rank_deltas (scope, level, lo_ts, lo_id, d) select ${S}, level, lo_ts, lo_id, d from g)
    select g.lo_ts, g.lo_id, coalesce(b.n, 0) + g.d + coalesce(x.d, 0) as n, coalesce(x.rows, 0) as pending
    from g left join rank_buckets b on b.scope = ${S} and b.level = 0 and b.lo_ts = g.lo_ts and b.lo_id = g.lo_id
      left join lateral (select sum(x.d) as d, count(*) as rows from rank_deltas x where x.scope = ${S} and x.level = 0 and x.lo_ts = g.lo_ts and x.lo_id = g.lo_id) x on true
    where g.level = 0`);
  appendText.set(`${keys}:${sign}`, stmt);
  return stmt;
}

function appendQuery(scope: string, keys: readonly RankKey[], sign: 1 | -1): Compilable<Leaf> {
  const args: Record<string, unknown> = { scope };
  keys.forEach((key, i) => ((args[`ts${i}`] = key.ts), (args[`id${i}`] = key.id)));
  const stmt = appendStatement(keys.length, sign);
  // It inserts the partition's base entries (if missing) and its own deltas, and updates nothing.
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
export async function rankInsert(tx: Tx, def: RankDef, values: readonly string[], keys: readonly RankKey[]): Promise<void> {
  if (keys.length === 0 || noteLate(tx, def, values, { added: keys })) return;
  if (heldMode(tx, partitionKey(def, values)) !== 'insert') return rankChange(tx, def, values, { added: keys });
  await countDeltas(tx, def, values, keys, 1);
}

/**
 * The keys were deleted in this transaction (rows that were there). Under the partition's lock
 * taken for inserts a delete counts as a negative delta, as a create counts as a positive one: the
 * entry holding a deleted row is found by its key as it would be for an insert, and no entry moves
 * while the lock is shared, so the row's entry is still the one that holds it.
 */
export async function rankDelete(tx: Tx, def: RankDef, values: readonly string[], keys: readonly RankKey[]): Promise<void> {
  if (keys.length === 0 || noteLate(tx, def, values, { removed: keys })) return;
  if (heldMode(tx, partitionKey(def, values)) !== 'insert') return rankChange(tx, def, values, { removed: keys });
  await countDeltas(tx, def, values, keys, -1);
}

// Delta rows this process wrote per partition since it last asked for a fold. Creates land in the
// newest leaf, so a leaf's pending rows tell the partition's; deletes fall anywhere (10,000
// deletes spread over 100,000 rows left about 50 in each leaf and none ever asked for a fold,
// while every page read all 20,000), so this count asks too.
const written = new Map<string, number>();

function countWritten(scope: string, keys: number): boolean {
  const n = (written.get(scope) ?? 0) + keys * LEVELS;
  if (n < rankSizes().fold) {
    written.set(scope, n);
    return false;
  }
  written.delete(scope);
  return true;
}

async function countDeltas(tx: Tx, def: RankDef, values: readonly string[], keys: readonly RankKey[], sign: 1 | -1): Promise<void> {
  const scope = partitionKey(def, values);
  const leaves: { readonly rows?: Leaf[] }[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) leaves.push(await deferredRows(tx, appendQuery(scope, keys.slice(i, i + CHUNK), sign)));
  const check = async (db: Kysely<Database>) => {
    const seen = leaves.flatMap((l) => l.rows ?? []).map((r) => ({ lo_ts: r.lo_ts, lo_id: r.lo_id, n: Number(r.n), pending: Number(r.pending) }));
    const fold = countWritten(scope, keys.length) || seen.some((r) => r.pending * LEVELS >= rankSizes().fold);
    const large = seen.filter((e) => e.n > rankSizes().leaf.max);
    // A delete's count was read before COMMIT, blind to deletes of the same leaf not committed
    // yet; read after COMMIT, it sees every one committed before, so of deletes that overlap the
    // last to commit sees the leaf as it is and merges it if it shrank below its minimum.
    const after = sign < 0 ? await committedLeaves(db, scope, seen) : seen;
    const small = after.filter((e) => e.n < rankSizes().leaf.min && e.lo_ts !== '');
    if (large.length + small.length > 0 || fold) await keep(db, def, values, { large, small, fold });
  };
  // A create's check starts its upkeep at once, where rankUpkeepSettled sees it; a delete's reads first.
  afterCommit(tx, (db) => (sign < 0 ? settling(() => check(db)) : check(db)), { wait: false });
}

// Deletes' checks after COMMIT, which read and then may start upkeep: rankUpkeepSettled waits for them too.
const checks = new Set<Promise<void>>();

function settling(fn: () => Promise<void>): Promise<void> {
  const p = fn().finally(() => checks.delete(p));
  checks.add(p);
  return p;
}

/** The leaves' counts as committed now, their deltas added; a leaf merged away meanwhile is left out. */
async function committedLeaves(db: Kysely<Database>, scope: string, leaves: readonly Entry[]): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let i = 0; i < leaves.length; i += CHUNK) {
    const keys = leaves.slice(i, i + CHUNK).filter((e) => e.lo_ts !== '');
    if (keys.length === 0) continue;
    const r = await sql<Entry>`select b.lo_ts, b.lo_id, b.n + coalesce((select sum(x.d) from rank_deltas x where x.scope = b.scope and x.level = 0
        and x.lo_ts = b.lo_ts and x.lo_id = b.lo_id), 0) as n
      from rank_buckets b where b.scope = ${scope} and b.level = 0
        and (b.lo_ts, b.lo_id) in (${sql.join(keys.map((e) => sql`(${e.lo_ts}, ${e.lo_id})`))})`.execute(db);
    out.push(...r.rows.map((e) => ({ lo_ts: e.lo_ts, lo_id: e.lo_id, n: Number(e.n) })));
  }
  return out;
}

/** Resolves once no upkeep runs in this process: before its database closes, and for tests that check the index. */
export async function rankUpkeepSettled(): Promise<void> {
  for (;;) {
    const running = [...checks, ...[...upkeep.values()].flatMap((u) => (u.running ? [u.running] : []))];
    if (running.length === 0) return;
    await Promise.allSettled(running);
  }
}
