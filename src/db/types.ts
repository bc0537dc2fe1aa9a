// The types every layer above sees: one Kysely type for both dialects. The few places that must
// differ per dialect ask `db.dialect`.
import type { Kysely, Transaction } from 'kysely';
import type pg from 'pg';

/**
 * Every table, by name. Empty here: each module adds its own tables from its tables.ts
 * (`declare module '../db/types.ts' { interface Database { … } }`), so this file lists no module
 * and a new module touches nothing outside its folder.
 */
export interface Database {}

export type DialectName = 'sqlite' | 'postgres';
export type Executor = Kysely<Database> | Transaction<Database>;

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** PostgreSQL pool, for metrics; absent on SQLite. */
  pool?: pg.Pool;
  /** The PostgreSQL schema in use when not the default one. */
  schema?: string;
  close(): Promise<void>;
}
