// Write transactions (docs/architecture.md §Database layer). Every transaction is opened by
// `write`, which hands its work a `Tx` (src/db/types.ts): Kysely's transaction and what the layer
// keeps for it while it runs (its dialect, the work that follows its commit, the ranked partitions
// it locked, a bulk load in progress) as fields of that one object, so that none of it lives in a
// table beside the transaction.
//
// Work that can wait until the transaction committed is registered with `afterCommit` on a write
// opened with `followUpFailed`, which runs it once the transaction committed (a ranked leaf's split
// when it grew too large, docs/pages.md §Keeping it exact; a commit signal).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import { isTransactionConflict } from './connection-loss.ts';
import { dialectOf } from './dialect.ts';
import { outsideBudget } from './request-budget.ts';
import { type Database, type Executor, type FollowUp, type Tx, TX_STATE, type TxState } from './types.ts';

export interface WriteOptions {
  /**
   * Runs what the work registered with `afterCommit`, in order, once the transaction committed; a
   * follow-up's failure goes here, not to the caller, since what it follows is committed. Without
   * it nothing can be registered (an API write gives it; the CLI's and jobs' writes need not).
   */
  followUpFailed?: (err: unknown) => void;
  /**
   * `fn` may run again from the start: it changes nothing outside the transaction (an API
   * request's service). A transaction that PostgreSQL cancels to end a deadlock, or for a
   * serialization failure, then runs again, up to `CONFLICT_TRIES` times in all, after a pause of
   * a few milliseconds, instead of failing the caller (docs/design.md §Database, "A conflict
   * between transactions"), and this is called with the conflict first (to log it). Without it the
   * conflict is the caller's, as any error.
   */
  rerun?: (conflict: unknown) => void;
}

/** How many times in all a `rerun` write runs when PostgreSQL cancels it for a conflict. */
export const CONFLICT_TRIES = 4;

/** Runs `fn` in a transaction of `db`; its outcome is the caller's (a throw rolls back). */
export async function write<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(db, fn, opts);
    } catch (err) {
      if (!opts.rerun || attempt >= CONFLICT_TRIES || !isTransactionConflict(err)) throw err;
      opts.rerun(err);
      // Apart, so that two transactions that deadlocked do not meet again at the same moment.
      await sleep(5 + Math.random() * 20 * attempt);
    }
  }
}

async function writeOnce<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>, opts: WriteOptions): Promise<T> {
  const failed = opts.followUpFailed;
  const later: FollowUp[] | undefined = failed ? [] : undefined;
  const result = await db.transaction().execute((t) => {
    const state: TxState = { dialect: dialectOf(t), followUps: later, held: new Map() };
    return fn(Object.assign(t, { bulk: undefined, [TX_STATE]: state }));
  });
  for (const f of later ?? []) {
    // Work the answer does not wait for is no part of the request's budget (src/db/request-budget.ts).
    const done = (f.wait ? f.fn(db) : outsideBudget(() => f.fn(db))).catch(failed);
    if (f.wait) await done;
  }
  return result;
}

/**
 * Runs the reads of `fn` on one snapshot: a `repeatable read` transaction, for reads of several
 * statements that must agree (a ranked page found by counting). It writes nothing, so it carries
 * none of `write`'s state; `readOnly` has the database refuse a write too (src/db/snapshot.ts).
 */
export async function snapshotRead<T>(db: Kysely<Database>, fn: (tx: Transaction<Database>) => Promise<T>, opts: { readOnly?: boolean } = {}): Promise<T> {
  const tx = db.transaction().setIsolationLevel('repeatable read');
  return (opts.readOnly ? tx.setAccessMode('read only') : tx).execute(fn);
}

/**
 * Runs `fn` in `db` when it is a transaction of `write`, else in a `write` of its own (without
 * follow-ups): for work that is one transaction whoever calls it.
 */
export function inWrite<T>(db: Executor, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return isTx(db) ? fn(db) : write(db, fn);
}

/** Whether `db` is a transaction of `write` (a Tx) rather than a database handle. */
export function isTx(db: Executor): db is Tx {
  return txState(db) !== undefined;
}

/** The layer's state of `db` when it is a transaction of `write`; undefined for a handle. */
export function txState(db: Executor): TxState | undefined {
  const state = (db as Partial<Tx>)[TX_STATE];
  if (!state && db.isTransaction) throw new Error('a transaction not opened by write() (src/db/write.ts)');
  return state;
}

/**
 * In a write opened with `followUpFailed`, registers `fn` to run after COMMIT and returns true;
 * elsewhere false. With `wait: false` the caller's answer does not wait for it (work whose result
 * nobody sees, such as a ranked index's upkeep); its failure still goes to `followUpFailed`.
 */
export function afterCommit(tx: Tx, fn: FollowUp['fn'], opts: { wait?: boolean } = {}): boolean {
  const list = txState(tx)?.followUps;
  list?.push({ fn, wait: opts.wait ?? true });
  return list !== undefined;
}

/** True in a write opened with `followUpFailed`: work registered with `afterCommit` will run. */
export function runsFollowUps(tx: Tx): boolean {
  return txState(tx)?.followUps !== undefined;
}
