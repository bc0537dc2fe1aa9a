// Opens the database for either dialect (the types: types.ts).
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import postgres from 'postgres';
import { type Clients, PostgresJsDialect, runRead, TransactionGate } from './postgres.ts';
import { registerFastReader } from './prepared.ts';
import { rankUpkeepSettled } from './rank-append.ts';
import { NodeSqliteDialect } from './sqlite.ts';
import { ThreadedSqliteDialect } from './sqlite-writer.ts';
import type { Database, Db, PoolStats } from './types.ts';

export interface DbOptions {
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests give each run its own). */
  schema?: string;
  /** SQLite file; defaults to DATA_DIR/rolodex.db. */
  sqliteFile?: string;
  poolSize?: number;
  /** SQLite: statements run on a thread of their own (src/db/sqlite-writer.ts), for `rolodex import`. */
  writerThread?: boolean;
}

// COUNT(*) and BIGINT (int8), and NUMERIC (what SUM gives), come back as numbers: the API wants
// numbers, and no count comes near 2^53.
const NUMBERS: Record<string, postgres.PostgresType> = {
  int8: { to: 20, from: [20], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
  numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
};

// Connections of the shared client, which pipelines every statement outside a transaction
// (src/db/postgres.ts); the rest of the pool is for transactions. One: a second spread the same
// statements over two sockets and two backends to wake, and cost each read more CPU
// (docs/performance.md §Pipelined PostgreSQL connections).
const PIPELINED = 1;

// libpq's `?host=` (the directory of a Unix socket, `?host=/var/run/postgresql`, as psql and pg
// read it) is not read from the URL by postgres.js, which would send it to the server as a
// setting; it is given as the host instead (docs/deploy.md §Database connections).
function hostOf(url: string): { url: string; host?: string } {
  const u = new URL(url);
  const host = u.searchParams.get('host');
  if (!host) return { url };
  u.searchParams.delete('host');
  return { url: u.toString(), host };
}

function openPostgres(databaseUrl: string, schema: string | undefined, poolSize: number): { clients: Clients; gate: TransactionGate } {
  const { url, host } = hostOf(databaseUrl);
  const client = (max: number) =>
    postgres(url, {
      max,
      ...(host ? { host } : {}),
      types: NUMBERS,
      // pg sent undefined as NULL; Kysely never binds undefined, but raw fragments might.
      transform: { undefined: null },
      // The server's notices (e.g. "relation already exists, skipping") are not the app's logs.
      onnotice: () => {},
      ...(schema ? { connection: { search_path: schema } } : {}),
    });
  // Transactions may wait on each other's locks while holding their connections; they have their
  // own, so reads never wait for one (docs/deploy.md §Database connections).
  const transactions = Math.max(1, poolSize - PIPELINED);
  return { clients: { shared: client(PIPELINED), tx: client(transactions) }, gate: new TransactionGate(transactions) };
}

// A schema named in the URL (`?options=-c search_path=x`) counts as the schema in use.
function schemaOf(url: string): string | undefined {
  const options = new URL(url).searchParams.get('options') ?? '';
  return /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
}

export function openDb(opts: DbOptions): Db {
  if (opts.databaseUrl) {
    const schema = opts.schema ?? schemaOf(opts.databaseUrl);
    const poolSize = opts.poolSize ?? 10;
    const { clients, gate } = openPostgres(opts.databaseUrl, opts.schema, poolSize);
    const kysely = new Kysely<Database>({ dialect: new PostgresJsDialect(clients, gate) });
    // Every statement with parameters is prepared once per connection (src/db/postgres.ts), and
    // prepared again by postgres.js when a migration changed what it reads.
    registerFastReader(kysely, {
      all: async <R>(_name: string, text: string, params: readonly unknown[]) =>
        Array.from(await runRead(clients.shared, { sql: text, parameters: params })) as R[],
    });
    const pool: PoolStats = { size: poolSize, transactions: () => gate.held, waiting: () => gate.waiting };
    // The ranked index's upkeep runs after the answers it follows (src/db/rank-append.ts): let it finish.
    const close = async () => {
      await rankUpkeepSettled();
      await kysely.destroy();
    };
    return { kysely, dialect: 'postgres', pool, ...(schema ? { schema } : {}), close };
  }
  const file = opts.sqliteFile ?? join(opts.dataDir, 'rolodex.db');
  const dialect = opts.writerThread ? new ThreadedSqliteDialect(file) : new NodeSqliteDialect(file);
  const kysely = new Kysely<Database>({ dialect });
  // The writer thread's handle reads through the thread too: a second connection in the process
  // would keep `rolodex import` from having the file alone (src/db/sqlite-writer.ts).
  if (!opts.writerThread)
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
