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
   *  are pipelined over the pool, src/db/postgres.ts): session state needs a transaction. */
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** PostgreSQL pool use, for metrics; absent on SQLite. */
  pool?: PoolStats;
  /** The PostgreSQL schema in use when not the default one. */
  schema?: string;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections the pool may open. */
  size: number;
  /** Transactions holding a connection of their own (at most the pool less its pipelined connections). */
  transactions(): number;
  /** Transactions waiting for one. */
  waiting(): number;
  /** How long the transaction that has waited longest for a connection has waited (0: none waits). */
  oldestWaitMs?(): number;
}
