// Opens the database for either dialect (the types: types.ts).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import { registerFastReader } from './prepared.ts';
import { registerScanner } from './scan.ts';
import { registerSignals } from './signals.ts';
import { sqliteSignals } from './sqlite/signals.ts';
import { NodeSqliteDialect } from './sqlite/connection.ts';
import { ThreadedSqliteDialect } from './sqlite/writer.ts';
import type { Database, Db } from './types.ts';

const require = createRequire(import.meta.url);

export interface DbOptions {
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests give each run its own). */
  schema?: string;
  /** SQLite file; defaults to DATA_DIR/rolodex.db. */
  sqliteFile?: string;
  poolSize?: number;
  /** SQLite: statements run on a thread of their own (src/db/sqlite/writer.ts), for `rolodex import`. */
  writerThread?: boolean;
  /**
   * SQLite: the file opened read-only, without the settings of a writing connection (setting WAL
   * writes the file's header): a look at what it holds that leaves the file as it was. Writes fail.
   */
  readOnly?: boolean;
  /**
   * PostgreSQL: the server cancels a statement that runs longer (`statement_timeout`), and the
   * process stops waiting for an answer or a connection a second later (src/db/postgres/deadline.ts).
   * 0 or absent: no limit (the CLI, migrations). The server passes DATABASE_STATEMENT_TIMEOUT_MS.
   */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: how long a connection attempt may take, from the TCP connect to the server's
   * first ready answer; with a statement timeout, at most that. Absent: CONNECT_TIMEOUT_MS
   * (src/db/postgres/open.ts). The server and the CLI pass DATABASE_CONNECT_TIMEOUT_MS.
   */
  connectTimeoutMs?: number;
}

export function openDb(opts: DbOptions): Db {
  // PostgreSQL's driver is loaded only when a database URL is configured: the embedded mode keeps
  // in memory only what it uses.
  if (opts.databaseUrl) return (require('./postgres/open.ts') as typeof import('./postgres/open.ts')).openPostgresDb(opts, opts.databaseUrl);
  const file = opts.sqliteFile ?? join(opts.dataDir, 'rolodex.db');
  const dialect = opts.writerThread ? new ThreadedSqliteDialect(file) : new NodeSqliteDialect(file, { readOnly: opts.readOnly === true });
  const kysely = new Kysely<Database>({ dialect });
  // The writer thread's handle reads through the thread too: a second connection in the process
  // would keep `rolodex import` from having the file alone (src/db/sqlite/writer.ts). A read-only
  // handle has neither: they open the writing connection first.
  if (!opts.writerThread && !opts.readOnly) {
    registerFastReader(kysely, { all: (_name, sql, params) => dialect.reader.all(sql, params), snapshot: (fn) => dialect.reader.snapshot(fn) });
    registerScanner(kysely, (sql, params) => dialect.scans.all(sql, params));
  }
  const signals = sqliteSignals(file);
  registerSignals(kysely, signals);
  return {
    kysely,
    dialect: 'sqlite',
    close: async () => {
      // Kysely's destroy() only closes a database it has used, and knows nothing of the reader.
      await signals.close();
      dialect.close();
      await kysely.destroy();
    },
  };
}

/** True when a database error is a unique-constraint violation, on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e?.code === '23505') return true;
  return e?.errcode === 2067 || e?.errcode === 1555 || (typeof e?.message === 'string' && e.message.startsWith('UNIQUE constraint failed'));
}

// SQLite's primary result codes (the low byte of an extended one) and PostgreSQL's SQLSTATEs that
// say the database's storage refuses writes: not the statement's fault, and mended only by an
// operator (docs/reliability.md §The database's storage).
const SQLITE_REFUSALS: Record<number, string> = {
  8: "the database file, or its -wal or -shm file beside it, is read-only for this process (their owner and mode, and DATA_DIR's)",
  10: 'the disk holding the database failed to read or write',
  13: 'the disk holding the database is full',
};
const POSTGRES_REFUSALS: Record<string, string> = {
  '25006': 'the database server accepts no writes (a read-only standby?)',
  '53100': "the database server's disk is full",
  '58030': "the database server's disk failed to read or write",
};

/** Why the database's storage refuses writes, or undefined when `err` says nothing of it. */
export function storageRefusal(err: unknown): string | undefined {
  const { code, errcode } = (err ?? {}) as { code?: unknown; errcode?: unknown };
  if (typeof errcode === 'number') return SQLITE_REFUSALS[errcode & 0xff];
  return typeof code === 'string' && Object.hasOwn(POSTGRES_REFUSALS, code) ? POSTGRES_REFUSALS[code] : undefined;
}

/** Resolves when the database answers a query (readiness). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
