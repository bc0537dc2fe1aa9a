// PostgreSQL through postgres.js: opened by openDb (src/db/database.ts) only when DATABASE_URL is set.
import { Kysely } from 'kysely';
import postgres from 'postgres';
import { type Clients, PostgresJsDialect, runRead, TransactionGate } from './postgres.ts';
import { registerFastReader } from './prepared.ts';
import { rankUpkeepSettled } from './rank-append.ts';
import type { Database, Db, PoolStats } from './types.ts';

// COUNT(*) and BIGINT (int8), and NUMERIC (what SUM gives), come back as numbers: the API wants
// numbers, and no count comes near 2^53.
const NUMBERS: Record<string, postgres.PostgresType> = {
  int8: { to: 20, from: [20], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
  numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
};

// Connections of the shared client, which pipelines every statement outside a transaction
// (src/db/postgres.ts); the rest of the pool is for transactions. One: a second spread the same
// statements over two sockets and two backends to wake, and cost each read more CPU
// (docs/performance.md §One pipelined connection).
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

export function openPostgresDb(opts: { schema?: string; poolSize?: number }, databaseUrl: string): Db {
  const schema = opts.schema ?? schemaOf(databaseUrl);
  const poolSize = opts.poolSize ?? 10;
  const { clients, gate } = openPostgres(databaseUrl, opts.schema, poolSize);
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
