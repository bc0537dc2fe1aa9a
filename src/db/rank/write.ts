// Keeps rank_buckets exact (docs/pages.md), in the transaction that writes the rows: a batch of
// inserted or deleted keys moves the count of the entry holding each key on every level (one
// statement per level and 400 keys, each key found through the index), then leaves that grew past
// their maximum are split and those that shrank below their minimum merged into a neighbour, and
// the levels above are kept in shape the same way, counting entries below instead of rows.
// A set with parts also keeps, per entry, its count in each part (src/db/rank/parts.ts).
// Writers of one partition are serialized: SQLite has one writer at a time; on PostgreSQL every writer
// takes the partition's advisory lock exclusively before it writes the partition's rows (lockPartition), except
// creates that only insert, which count themselves as deltas (src/db/rank/append.ts). There, in a
// transaction that runs follow-ups (an API write), the counts go out with COMMIT and a leaf out of
// bounds is split or merged in a transaction of its own after it (docs/pages.md §Keeping it exact).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { deferredRows } from '../pipeline.ts';
import { afterCommit, write } from '../write.ts';
import { lockPartition } from './lock.ts';
import { endLate, latePartition, noteLate, untilTaken } from './late.ts';
import { appendRun } from './late-run.ts';
import type { Database, Tx } from '../types.ts';
import { isPostgres } from '../dialect.ts';
import { LEVELS, lockOrder, manyKeys, type RankDef, type RankKey, partitionKey } from './def.ts';
import { addParts, perEntry } from './parts.ts';
import { type Entry, outOfBounds, Partition } from './partition.ts';

const CHUNK = 400;

/**
 * Rows of the partition changed in this transaction: `removed` are the keys (and parts) that are no
 * longer there, `added` those that are new; a row whose key or part changed is in both. Every count
 * moves before any entry is split or merged, since those read the rows as they are now.
 */
export async function rankChange(
  tx: Tx,
  def: RankDef,
  values: readonly string[],
  change: { added?: readonly RankKey[]; removed?: readonly RankKey[] },
): Promise<void> {
  const [added, removed] = [change.added ?? [], change.removed ?? []];
  if (added.length + removed.length === 0 || noteLate(tx, def, values, change)) return;
  if (def.part && [...added, ...removed].some((k) => typeof k.part !== 'string')) throw new Error(`rank ${def.name}: a key without its part`);
  const s = new Partition(tx, def, values);
  await lockPartition(tx, def, values);
  await s.ensureBase();
  // A batch of several leaves' worth, and at least half as large as the partition was, is cheaper to
  // count again from the index.
  if (added.length >= manyKeys() && added.length * 2 >= (await s.total())) return s.rebuild();
  const later = isPostgres(tx) && !def.part ? laterCheck(tx, def, values) : undefined;
  const touched = new Map<string, Entry>();
  for (const [keys, sign] of [
    [removed, -1],
    [added, 1],
  ] as const) {
    for (let i = 0; i < keys.length; i += CHUNK) {
      const part = keys.slice(i, i + CHUNK);
      // Level 0 last: the levels above answer nothing the caller needs, so they go out with it.
      for (let level = LEVELS - 1; level >= 0; level--) {
        if (level === 0 && later) {
          later.push(await deferredRows(tx, s.countUpdate(0, part, sign)));
          continue;
        }
        const moved = await s.count(level, part, sign, level > 0);
        if (level === 0) for (const e of moved) touched.set(`${e.lo_ts}\u0000${e.lo_id}`, e);
      }
    }
  }
  // Counts are final here; only leaves out of bounds need a look (check re-reads each).
  for (const e of touched.values()) if (outOfBounds(e)) await s.check(0, e);
}

/**
 * Where the transaction runs follow-ups: the list that will hold the leaves' new counts, read after
 * COMMIT; a leaf left out of bounds is then checked under the partition's lock, in a transaction of its
 * own (check re-reads it: another writer may have fixed it meanwhile). Until then the leaf is only
 * larger or smaller than its bounds, its count exact. Elsewhere undefined.
 */
function laterCheck(tx: Tx, def: RankDef, values: readonly string[]): { readonly rows?: Entry[] }[] | undefined {
  const counts: { readonly rows?: Entry[] }[] = [];
  const registered = afterCommit(tx, async (db) => {
    const touched = new Map<string, Entry>();
    for (const c of counts) for (const e of c.rows ?? []) touched.set(`${e.lo_ts}\u0000${e.lo_id}`, { ...e, n: Number(e.n) });
    const out = [...touched.values()].filter(outOfBounds);
    if (out.length === 0) return;
    await write(db, async (t) => {
      await lockPartition(t, def, values);
      const s = new Partition(t, def, values);
      for (const e of out) await s.check(0, e);
    });
  });
  return registered ? counts : undefined;
}

/** Splits or merges each of `leaves` that is out of bounds, in a transaction of its own under the partition's exclusive lock. */
export async function rankCheckLeaves(
  db: Kysely<Database>,
  def: RankDef,
  values: readonly string[],
  leaves: readonly { lo_ts: string; lo_id: string }[],
): Promise<void> {
  await write(db, async (t) => {
    await lockPartition(t, def, values);
    const s = new Partition(t, def, values);
    for (const e of leaves) await s.check(0, e);
  });
}

/** Splits or merges each of `leaves` that is out of bounds, in `tx`, which holds the partition's exclusive lock. */
export async function rankCheckLeavesIn(tx: Tx, def: RankDef, values: readonly string[], leaves: readonly { lo_ts: string; lo_id: string }[]): Promise<void> {
  const s = new Partition(tx, def, values);
  for (const e of leaves) await s.check(0, e);
}

/**
 * Rows of the partition moved from part `from` to part `to` in this transaction, their keys unchanged
 * (`rows` selects their keys as ts, id): only the counts per part change, entry by entry, in one
 * pass over those rows per level.
 */
export async function rankMoveRows(tx: Tx, def: RankDef, values: readonly string[], rows: RawBuilder<unknown>, from: string, to: string): Promise<void> {
  if (!def.part) throw new Error(`rank ${def.name}: no parts`);
  if (from === to) return;
  const scope = partitionKey(def, values);
  await lockPartition(tx, def, values);
  for (let level = 0; level < LEVELS; level++) {
    const children = sql`select cast(${scope} as text) as scope, ts, id, cast(${from} as text) as part, 1 as w from (${rows}) r`;
    const counts = await sql<{ lo_ts: string; lo_id: string; n: number }>`${perEntry(level, sql`scope = ${scope}`, children)}`.execute(tx);
    const deltas = counts.rows.flatMap((c) => [
      { lo_ts: c.lo_ts, lo_id: c.lo_id, part: from, d: -Number(c.n) },
      { lo_ts: c.lo_ts, lo_id: c.lo_id, part: to, d: Number(c.n) },
    ]);
    await addParts(tx, scope, level, deltas);
  }
}

/** Counts the partition again from its rows (after a bulk load). */
export async function rankRebuild(tx: Tx, def: RankDef, values: readonly string[]): Promise<void> {
  if (noteLate(tx, def, values, { rebuild: true })) return;
  await lockPartition(tx, def, values);
  await new Partition(tx, def, values).rebuild();
}

/**
 * Keys loaded into a partition that had no rows when the load began (an import's bulk load, which
 * writes its rows without counting them), until `rankLoadEnd`. A transaction that takes its locks
 * late notes them as it notes a create's, so that one run of keys is counted at its end without
 * reading its rows (docs/pages.md §Long transactions, A run of keys); any other needs none.
 */
export function rankLoadKeys(tx: Tx, def: RankDef, values: readonly string[], keys: readonly RankKey[]): void {
  if (keys.length > 0) noteLate(tx, def, values, { added: keys });
}

/**
 * Ends a load into the partition (`rankLoadKeys`): a transaction that takes its locks late counts
 * the keys it noted at its end; any other counts the partition from its rows now.
 */
export async function rankLoadEnd(tx: Tx, def: RankDef, values: readonly string[]): Promise<void> {
  if (!latePartition(tx, def, values)) await rankRebuild(tx, def, values);
}

/**
 * Ends a transaction's late locks (src/db/rank/late.ts), just before its COMMIT: locks every
 * partition it noted, exclusively, in `lockOrder`, the order every writer of these sets takes them
 * in, and counts what it wrote in each. The order it touched them follows its input: taken in it,
 * they could meet in a circle a write that takes two of them in `lockOrder` (an update moving a
 * record from one value's set to another's).
 * True when locks were taken late (the caller then checks again, under them, what it checked
 * without them).
 */
export async function takeLateLocks(tx: Tx): Promise<boolean> {
  const late = endLate(tx)?.sort(lockOrder);
  if (!late) return false;
  // A circle with an API write does not fail the transaction: it gives way (src/db/rank/late.ts).
  await untilTaken(tx, async () => {
    for (const p of late) await lockPartition(tx, p.def, p.values);
  });
  for (const p of late) {
    // A run of keys too many to count one by one is counted from the run, if the partition allows.
    const run = p.run && (p.dropped || p.run.count >= manyKeys()) ? p.run : undefined;
    if (!p.rebuild && run && (await appendRun(tx, p.def, p.values, run))) continue;
    if (p.rebuild || p.dropped) await rankRebuild(tx, p.def, p.values);
    else await rankChange(tx, p.def, p.values, { added: p.added, removed: p.removed });
  }
  return true;
}
