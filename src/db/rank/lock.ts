// Who may write a ranked partition at the same time (docs/pages.md §Keeping it exact, §Creates that only
// insert). On PostgreSQL a partition has an advisory lock, taken in one of two modes:
// - 'write' (exclusive): the writer moves counts in place, splits and merges entries. It first
//   folds the partition's pending count deltas into the entries, so that it sees exact counts.
// - 'insert' (shared): the transaction only adds rows, or deletes rows it holds (a record moved to
//   the trash). It records their counts as deltas, rows of their own that no other writer touches,
//   so creates and deletes of one partition run side by side; no entry moves meanwhile, since
//   moving one needs the lock exclusively. Two deletes of one row meet on the row itself.
// A transaction that took a partition for inserts cannot then take it for writes: two such
// transactions would each wait for the other's shared lock. Such a caller takes 'write' first.
// SQLite has one writer at a time: no lock, no deltas.
import { createHash } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { deferred, markGroupable } from '../pipeline.ts';
import type { LockMode, Tx } from '../types.ts';
import { runsFollowUps, txState } from '../write.ts';
import { isPostgres } from '../dialect.ts';
import { type RankDef, partitionKey } from './def.ts';
import { latePartition } from './late.ts';

export type { LockMode };

/** The mode in which `tx` holds the partition, if it took it. */
export function heldMode(tx: Tx, scope: string): LockMode | undefined {
  return txState(tx)?.held.get(scope);
}

/**
 * Call before writing the partition's rows: on PostgreSQL, serializes the partition's writers ('write'), or
 * lets inserters run together ('insert'). The lock is sent with the transaction's next awaited
 * statement (src/db/pipeline.ts), before it. 'insert' is taken as 'write' for a set that does not
 * declare `appends`, and in a write that runs no follow-ups (src/db/write.ts), where no upkeep can
 * follow the commit.
 */
export async function lockPartition(tx: Tx, def: RankDef, values: readonly string[], mode: LockMode = 'write'): Promise<void> {
  if (!isPostgres(tx)) return;
  // A transaction that takes its locks late takes this one just before COMMIT (src/db/rank/late.ts).
  if (latePartition(tx, def, values)) return;
  const scope = partitionKey(def, values);
  // Only a transaction holds the lock (until it ends), and keeps what it holds in its state.
  const modes = txState(tx)?.held;
  const before = modes?.get(scope);
  const want: LockMode = mode === 'insert' && def.appends && runsFollowUps(tx) ? 'insert' : 'write';
  if (before === 'write' || before === want) return;
  if (before === 'insert') throw new Error(`rank ${def.name}: ${scope} was taken for inserts; a transaction that also moves entries takes it for writes first`);
  modes?.set(scope, want);
  // The lock goes out within BEGIN's simple query when it is the transaction's first statement
  // (src/db/postgres/connection.ts), which binds no parameters: its key is a number computed here, so no
  // text of the partition enters the statement.
  const lock = want === 'insert' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  const statement = CompiledQuery.raw(`select ${lock}(${lockKey(scope)})`);
  await deferred(tx, { compile: () => (want === 'insert' ? markGroupable(statement) : statement) });
  if (want === 'insert') return;
  if (def.appends) await deferred(tx, foldDeltas(scope));
}

/** A name's advisory-lock key: the first 64 bits of its SHA-256, as a signed bigint. */
export function lockKey(scope: string): string {
  return createHash('sha256').update(scope).digest().readBigInt64BE(0).toString();
}

/** Moves the partition's pending deltas into its entries' counts; only under the exclusive lock. */
function foldDeltas(scope: string) {
  return sql`with taken as (delete from rank_deltas where scope = ${scope} returning level, lo_ts, lo_id, d),
    g as (select level, lo_ts, lo_id, sum(d) as d from taken group by level, lo_ts, lo_id)
    update rank_buckets b set n = b.n + g.d from g where b.scope = ${scope} and b.level = g.level and b.lo_ts = g.lo_ts and b.lo_id = g.lo_id`;
}
