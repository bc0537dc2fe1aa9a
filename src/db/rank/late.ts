// Late locks for a long transaction (docs/pages.md §Long transactions). A transaction that writes
// for minutes (an atomic import) and locked each listing at its first row would hold that lock
// until it commits, and every create of that listing would wait for it and fail past the
// statement timeout. Marked with `lockLate`, such a transaction neither locks the partitions of
// the sets that declare `appends` nor counts its keys in them as it writes: it notes the keys it
// inserted and deleted per partition (past a budget, only the run of keys it appended in order,
// src/db/rank/late-run.ts, or that the partition is to be counted again), and `takeLateLocks`
// (src/db/rank/write.ts), just before COMMIT, locks those partitions exclusively in the order
// every writer of these sets takes them (`lockOrder`, src/db/rank/def.ts) and counts everything at
// once.
//
// The counts stay exact meanwhile: nobody else sees the transaction's rows before it commits, so
// every other writer's counts and splits agree with the rows it sees; under the exclusive lock
// the transaction then sees the others' committed rows, already counted, and its own, which it
// counts now. Whatever the transaction checked without the lock (a unique value) it checks again
// after `takeLateLocks`, under it.
//
// The locks taken late can close a circle that the transaction cannot leave by running again: it
// holds the rows it updated (locked by its reads) when it asks for the listings, and an API write
// that took a listing and then waits for one of those rows (a delete of a record the
// transaction updated) waits for it while it waits for the write. So the transaction gives way
// (`untilTaken`): the API write, cancelled by its statement timeout, answers its retryable 503.
//
// Only PostgreSQL locks partitions: on SQLite the transaction holds the only writer anyway, and
// nothing is deferred.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { isDeadlock } from '../connection-loss.ts';
import { deferred, settled } from '../pipeline.ts';
import type { LatePartition, LateRanks, Tx } from '../types.ts';
import { txState } from '../write.ts';
import { type RankDef, type RankKey, partitionKey, rankSizes } from './def.ts';
import { extendRun } from './late-run.ts';

/** Keys held in all before the largest partition's are dropped and that partition is counted again instead. */
export const LATE_KEYS = { max: 100_000 };

/**
 * Marks `tx` (a write of PostgreSQL) as taking its listings' locks late; a no-op on SQLite. True
 * when it took effect: `takeLateLocks` will then take them, and the caller may leave for that
 * moment the writes that other writers order after a listing (src/lists/import.ts).
 */
export function lockLate(tx: Tx): boolean {
  const state = txState(tx);
  if (state?.dialect !== 'postgres') return false;
  state.late = { partitions: new Map(), keys: 0 };
  return true;
}

/** The partition's pending work when `tx` defers it (the set declares `appends`), noted as touched. */
export function latePartition(tx: Tx, def: RankDef, values: readonly string[]): LatePartition | undefined {
  const late = txState(tx)?.late;
  if (!late || !def.appends) return undefined;
  const scope = partitionKey(def, values);
  let p = late.partitions.get(scope);
  if (!p) late.partitions.set(scope, (p = { def, values: [...values], added: [], removed: [], rebuild: false, run: null, dropped: false }));
  return p;
}

/** Notes keys inserted or deleted in a deferred partition, or that it is to be counted again; false when `tx` does not defer it. */
export function noteLate(
  tx: Tx,
  def: RankDef,
  values: readonly string[],
  change: { added?: readonly RankKey[]; removed?: readonly RankKey[]; rebuild?: boolean },
): boolean {
  const p = latePartition(tx, def, values);
  if (!p) return false;
  const late = txState(tx)!.late!;
  if (change.rebuild) drop(late, p, true);
  if (p.rebuild) return true;
  // A partition's first keys start its run; later ones extend it while it holds.
  const fresh = p.added.length + p.removed.length === 0 && !p.dropped;
  if (fresh || p.run) p.run = extendRun(fresh ? null : p.run, change, rankSizes().leaf.target);
  if (p.dropped) {
    if (!p.run) drop(late, p, true);
    return true;
  }
  for (const k of change.added ?? []) p.added.push(k);
  for (const k of change.removed ?? []) p.removed.push(k);
  late.keys += (change.added?.length ?? 0) + (change.removed?.length ?? 0);
  while (late.keys > LATE_KEYS.max) drop(late, largest(late), false);
  return true;
}

/** Lets go of a partition's keys: it is counted from its run if it has one (and no rebuild was asked for), else again from its rows. */
function drop(late: LateRanks, p: LatePartition, rebuild: boolean): void {
  late.keys -= p.added.length + p.removed.length;
  p.added = [];
  p.removed = [];
  if (rebuild || !p.run) {
    p.rebuild = true;
    p.run = null;
  } else p.dropped = true;
}

function largest(late: LateRanks): LatePartition {
  let best: LatePartition | undefined;
  for (const p of late.partitions.values()) if (!best || p.added.length + p.removed.length > best.added.length + best.removed.length) best = p;
  return best!;
}

/** Ends the deferral: the partitions `tx` noted, in the order first touched; undefined when it took no lock late. */
export function endLate(tx: Tx): LatePartition[] | undefined {
  const state = txState(tx);
  const late = state?.late;
  if (!state || !late) return undefined;
  state.late = undefined;
  return [...late.partitions.values()];
}

/**
 * How long `untilTaken` asks again for the late locks while PostgreSQL cancels the asking to end a
 * deadlock, and the pause between two asks. Longer than an API request's statement timeout
 * (`DATABASE_STATEMENT_TIMEOUT_MS`, 5 s by default) many times over: the write in the circle is
 * cancelled first.
 */
export const LATE_PATIENCE = { ms: 60_000, pauseMs: 50 };

/**
 * Runs `take`, the statements that take the late locks (sent deferred), in a savepoint of `tx`, and
 * waits for them. PostgreSQL ends a circle of waits by cancelling the transaction whose deadlock
 * check runs once the circle closed, `deadlock_timeout` after its wait began: here, when the
 * other write had waited longer, the one asking for the locks. Cancelled, `tx` rolls back to the
 * savepoint (the locks it got in it go, every row it wrote and locked before it stays), pauses
 * and asks again: the other write keeps waiting for its row until its statement timeout cancels
 * it, which lets go of the listing. Past `LATE_PATIENCE.ms` the deadlock is the caller's.
 */
export async function untilTaken(tx: Tx, take: () => Promise<void>): Promise<void> {
  const held = txState(tx)!.held;
  const before = new Map(held);
  const until = performance.now() + LATE_PATIENCE.ms;
  // Awaited: what the transaction sent before it has run, so a failure after it is the locks'.
  await sql`savepoint late_locks`.execute(tx);
  for (;;) {
    try {
      await take();
      // Skipped when a lock failed: the savepoint is then still there to roll back to.
      await deferred(tx, sql`release savepoint late_locks`);
      await settled(tx);
      return;
    } catch (err) {
      if (!isDeadlock(err) || performance.now() >= until) throw err;
      await sql`rollback to savepoint late_locks`.execute(tx);
      // The partitions taken in the savepoint are no longer held.
      held.clear();
      for (const [scope, mode] of before) held.set(scope, mode);
      await sleep(LATE_PATIENCE.pauseMs);
    }
  }
}
