// Opens the database for either dialect (the types: types.ts).
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { namedStatementReader, registerFastReader } from './prepared.ts';
import { NodeSqliteDialect } from './sqlite.ts';
import type { Database, Db } from './types.ts';

export interface DbOptions {
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests give each run its own). */
  schema?: string;
  /** SQLite file; defaults to DATA_DIR/rolodex.db. */
  sqliteFile?: string;
  poolSize?: number;
}

// COUNT(*) and BIGINT come back from pg as strings; the API wants numbers.
let pgTypesSet = false;
function setPgTypes(): void {
  if (pgTypesSet) return;
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  pgTypesSet = true;
}

// A schema named in the URL (`?options=-c search_path=x`) counts as the schema in use.
function schemaOf(url: string): string | undefined {
  const options = new URL(url).searchParams.get('options') ?? '';
  return /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
}

export function openDb(opts: DbOptions): Db {
  if (opts.databaseUrl) {
    const schema = opts.schema ?? schemaOf(opts.databaseUrl);
    setPgTypes();
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => {});
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    registerFastReader(kysely, namedStatementReader(pool));
    return { kysely, dialect: 'postgres', pool, ...(schema ? { schema } : {}), close: () => kysely.destroy() };
  }
  const dialect = new NodeSqliteDialect(opts.sqliteFile ?? join(opts.dataDir, 'rolodex.db'));
  const kysely = new Kysely<Database>({ dialect });
  registerFastReader(kysely, { all: (_name, sql, params) => dialect.reader.all(sql, params), snapshot: (fn) => dialect.reader.snapshot(fn) });
  return {
    kysely,
    dialect: 'sqlite',
    close: async () => {
      // Kysely's destroy() only closes a database it has used, and knows nothing of the reader.
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

/** Resolves when the database answers a query (readiness). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
