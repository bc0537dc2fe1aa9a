// The types every layer above sees: one Kysely type for both dialects. The few places that must
// differ per dialect ask `db.dialect`.
import type { Kysely, Transaction } from 'kysely';

/**
 * Every table, by name. Empty here: each module adds its own tables from its tables.ts
 * (`declare module '../db/types.ts' { interface Database { … } }`), so this file lists no module
 * and a new module touches nothing outside its folder.
 */
export interface Database {}

export type DialectName = 'sqlite' | 'postgres';
export type Executor = Kysely<Database> | Transaction<Database>;

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
