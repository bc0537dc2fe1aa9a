// The types every layer above sees: one Kysely type for both dialects. The few places that must
// differ per dialect ask `db.dialect`.
import type { Kysely, Transaction } from 'kysely';
import type pg from 'pg';
import type { FoundationTables } from './tables.ts';
import type { ListsTables } from '../lists/tables.ts';
import type { MessagesTables } from '../messages/tables.ts';
import type { FilesTables } from '../files/tables.ts';

export interface Database extends FoundationTables, ListsTables, MessagesTables, FilesTables {}

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
