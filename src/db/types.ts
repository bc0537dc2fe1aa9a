// The types every layer above sees: one Kysely type for both dialects. The few places that must
// differ per dialect ask `db.dialect`.
import type { Kysely, Transaction } from 'kysely';
import type { RankDef, RankKey } from './rank/def.ts';

/**
 * Every table, by name. Empty here: each module adds its own tables from its tables.ts
 * (`declare module '../db/types.ts' { interface Database { … } }`), so this file lists no module
 * and a new module touches nothing outside its folder.
 */
export interface Database {}

export type DialectName = 'sqlite' | 'postgres';
/** A database handle, or a transaction opened by `write` (src/db/write.ts). */
export type Executor = Kysely<Database> | Tx;

/**
 * A transaction opened by `write` (src/db/write.ts, docs/architecture.md §Database layer): Kysely's
 * transaction, and what the layer keeps for it while it runs, so that no signature hides it.
 */
export type Tx = Transaction<Database> & {
  /** The bulk load in progress in the transaction, if any (src/records/index/repository.ts, docs/import.md §Speed). */
  bulk: BulkLoadState | undefined;
  /** The layer's own state of the transaction; only src/db/ reads it. */
  readonly [TX_STATE]: TxState;
};

/** A bulk load in progress: the object type it loads, and what its writer gathers until it ends. */
export interface BulkLoadState {
  readonly objectType: string;
}

/** The key of a transaction's state that only the database layer reads. */
export const TX_STATE: unique symbol = Symbol('rolodex.tx');

/** Work that runs once a transaction committed (`afterCommit`), on the handle it was opened on. */
export interface FollowUp {
  fn: (db: Kysely<Database>) => Promise<void>;
  /** Whether the caller's answer waits for it. */
  wait: boolean;
}

/** Who may write a ranked partition beside the transaction (src/db/rank/lock.ts). */
export type LockMode = 'write' | 'insert';

export interface TxState {
  readonly dialect: DialectName;
  /** What runs once the transaction committed (`afterCommit`); undefined where the write runs none. */
  readonly followUps: FollowUp[] | undefined;
  /** The ranked partitions the transaction has locked, and how (src/db/rank/lock.ts). */
  readonly held: Map<string, LockMode>;
  /** Listings whose locks and counts wait until just before COMMIT (src/db/rank/late.ts); undefined when none do. */
  late?: LateRanks;
}

/** A ranked partition's keys written by a transaction that takes its locks late (src/db/rank/late.ts). */
export interface LatePartition {
  readonly def: RankDef;
  readonly values: readonly string[];
  added: RankKey[];
  removed: RankKey[];
  /** Counted again from its rows instead (past the budget of keys, or a rebuild asked for). */
  rebuild: boolean;
  /**
   * While every key noted is an insert, all of one timestamp, each id greater than the last: their
   * run (src/db/rank/late-run.ts); null once they are not.
   */
  run: LateRun | null;
  /** The keys are no longer held (past the budget), their run is: counted from it, or again from the rows. */
  dropped: boolean;
}

/** Keys appended in increasing order by a late transaction: enough to count them without their rows. */
export interface LateRun {
  first: RankKey;
  last: RankKey;
  count: number;
  /** The first key of each leaf's worth (`leaf.target` keys) after the first. */
  cuts: RankKey[];
  /** `leaf.target` when the run began: the size of every leaf's worth but the last. */
  target: number;
}

export interface LateRanks {
  /** By partition key, in the order first touched; their locks are taken in `lockOrder` (src/db/rank/def.ts). */
  readonly partitions: Map<string, LatePartition>;
  /** Keys held in all. */
  keys: number;
}

export interface Db {
  /** On PostgreSQL, `kysely.connection()` does not pin one session (queries outside a transaction
   *  are pipelined over the pool, src/db/postgres/connection.ts): session state needs a transaction. */
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** PostgreSQL pool use, for metrics; absent on SQLite. */
  pool?: PoolStats;
  /** How long an API request may wait on the database in all (src/db/request-budget.ts); absent or 0: no limit. */
  requestBudgetMs?: number;
  /** The PostgreSQL schema in use when not the default one. */
  schema?: string;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections the pool may open. */
  size: number;
  /** Transactions that may hold a connection at once: the pool less its pipelined and scan connections. */
  transactionSlots: number;
  /** Transactions holding a connection of their own (at most `transactionSlots`). */
  transactions(): number;
  /** Transactions waiting for one. */
  waiting(): number;
  /** How long the transaction that has waited longest for a connection has waited (0: none waits). */
  oldestWaitMs?(): number;
  /** Scans running on the scan lane's connections (src/db/scan.ts). */
  scans?(): number;
  /** Scans waiting for one of them. */
  scansWaiting?(): number;
}
