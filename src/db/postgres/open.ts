// PostgreSQL through postgres.js: opened by openDb (src/db/database.ts) only when DATABASE_URL is set.
import { Kysely } from 'kysely';
import postgres from 'postgres';
import { endClient, OpenSockets } from './close.ts';
import { abandon, DEADLINE_GRACE_MS, denseRows } from './deadline.ts';
import { Refusals } from './refused.ts';
import { PostgresJsDialect } from './connection.ts';
import { type Clients, runRead } from './lanes.ts';
import { type ListenClient, postgresSignals } from './signals.ts';
import { turnSockets } from './socket.ts';
import { registerSignals } from '../signals.ts';
import { withinBudget } from '../request-budget.ts';
import { Gate } from '../gate.ts';
import { registerFastReader } from '../prepared.ts';
import { rankUpkeepSettled } from '../rank/append.ts';
import type { Database, Db, PoolStats } from '../types.ts';
import { schemaInUrl } from './url-schema.ts';

// COUNT(*) and BIGINT (int8), and NUMERIC (what SUM gives), come back as numbers: the API wants
// numbers, and no count comes near 2^53.
const NUMBERS: Record<string, postgres.PostgresType> = {
  int8: { to: 20, from: [20], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
  numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => Number(v) },
};

// Connections of the shared client, which pipelines every statement outside a transaction but
// scans (src/db/postgres/lanes.ts); the pool less these and the scan lane's is for transactions. One: a second spread the same
// statements over two sockets and two backends to wake, and cost each read more CPU
// (docs/performance.md §Pipelined PostgreSQL connections).
const PIPELINED = 1;

// Connections of the scan lane (src/db/postgres/lanes.ts), each carrying one scan at a time, taken from
// the pool. Two: with one, heavy filtered listings sent together wait for each other in turn, and
// point reads keep their latency with either (docs/performance.md §Slow scans beside point reads).
const SCANS = 2;

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

// After a failed connection attempt postgres.js waits before the next one, up to 20 s by default,
// and statements queued for a connection wait that long: a short wait instead, so that they fail
// (or go out) within their deadline (docs/reliability.md §Lost connections).
const reconnectBackoff = () => 0.1 + Math.random() * 0.2;

// A connection attempt that is not answered (a host that drops packets, a server that accepts and
// never answers) fails after this long when the caller names no bound: not postgres.js's 30 s,
// so that a command started against such a database says so within seconds (docs/deploy.md
// §Start and stop).
export const CONNECT_TIMEOUT_MS = 10_000;

// postgres.js calls `onnotify` with each NOTIFY its connection receives, and `socket` for each
// socket it connects (neither is in its types).
type ClientOptions = Partial<postgres.Options<Record<string, postgres.PostgresType>>> & {
  onnotify?: (channel: string, payload: string) => void;
  socket?: ReturnType<typeof turnSockets>;
};

function openPostgres(
  databaseUrl: string,
  schema: string | undefined,
  poolSize: number,
  timeoutMs: number,
  connectMs: number,
): { clients: Clients; gate: Gate; endReplaced: () => Promise<unknown>; listen: ListenClient; sockets: OpenSockets } {
  const { url, host } = hostOf(databaseUrl);
  const connection: Record<string, string | number> = {
    ...(schema ? { search_path: schema } : {}),
    ...(timeoutMs ? { statement_timeout: timeoutMs } : {}),
  };
  // A connection attempt gives up within a statement's deadline, so that the statements waiting
  // for it answer in time (docs/reliability.md §Lost connections). In seconds, as postgres.js counts.
  const connectTimeoutS = Math.min(connectMs, timeoutMs || Infinity) / 1000;
  const sockets = new OpenSockets();
  const client = (max: number, own: ClientOptions = {}) =>
    postgres(url, {
      max,
      ...own,
      ...(host ? { host } : {}),
      types: NUMBERS,
      // pg sent undefined as NULL; Kysely never binds undefined, but raw fragments might.
      transform: { undefined: null },
      // The server's notices (e.g. "relation already exists, skipping") are not the app's logs.
      onnotice: () => {},
      backoff: reconnectBackoff,
      connect_timeout: connectTimeoutS,
      ...(Object.keys(connection).length ? { connection } : {}),
      // A connection's writes of one turn of the event loop go out as one (src/db/postgres/socket.ts).
      socket: turnSockets(sockets),
    } as ClientOptions);
  // Transactions may wait on each other's locks while holding their connections; they have their
  // own, so reads never wait for one (docs/deploy.md §Database connections).
  const transactions = Math.max(1, poolSize - PIPELINED - SCANS);
  const replaced = new Set<Promise<void>>();
  let closing = false;
  const sizes = { shared: PIPELINED, scan: SCANS, tx: transactions };
  const clients: Clients = {
    shared: client(PIPELINED),
    scan: client(SCANS),
    scanGate: new Gate(SCANS),
    tx: client(transactions),
    deadlineMs: timeoutMs ? timeoutMs + DEADLINE_GRACE_MS : 0,
    refusals: new Refusals(),
    // The server answers every statement within its timeout, if only to cancel it: a lane whose
    // statement missed the deadline has a connection the driver lost track of. Its client is
    // replaced; what it still carries fails as a lost connection (503), and the new one connects
    // afresh (docs/reliability.md §Lost connections).
    missed: (lane, old) => {
      if (clients[lane] !== old) return;
      abandon(old);
      // A handle that is closing opens nothing more: its clients are ending already.
      if (closing) return;
      clients[lane] = client(sizes[lane]);
      // Ended as a closing handle ends its clients, and within the same bound: what it carries
      // has failed already, and a connection still opening or wedged is torn down. Closing the
      // handle waits for these ends, so that no replaced client outlives it.
      const ending: Promise<void> = endClient(old).finally(() => replaced.delete(ending));
      replaced.add(ending);
    },
  };
  // The handle is closing: no client is replaced from now on, and the replaced ones are waited for.
  const endReplaced = () => {
    closing = true;
    return Promise.all(replaced);
  };
  // The LISTEN connection of commit signals (src/db/postgres/signals.ts): never closed for its age
  // (postgres.js closes others after 30 to 60 minutes), and the server's types are not read on it.
  const listen: ListenClient = (notified, closed) => client(1, { max_lifetime: null, fetch_types: false, onnotify: notified, onclose: closed });
  return { clients, gate: new Gate(transactions), endReplaced, listen, sockets };
}

export function openPostgresDb(opts: { schema?: string; poolSize?: number; statementTimeoutMs?: number; connectTimeoutMs?: number }, databaseUrl: string): Db {
  const schema = opts.schema ?? schemaInUrl(databaseUrl);
  const poolSize = opts.poolSize ?? 10;
  const connectMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const { clients, gate, endReplaced, listen, sockets } = openPostgres(databaseUrl, opts.schema, poolSize, opts.statementTimeoutMs ?? 0, connectMs);
  const kysely = new Kysely<Database>({ dialect: new PostgresJsDialect(clients, gate) });
  const signals = postgresSignals(clients, schema, listen);
  registerSignals(kysely, signals);
  // Every statement with parameters is prepared once per connection (src/db/postgres/connection.ts), and
  // prepared again by postgres.js when a migration changed what it reads.
  registerFastReader(kysely, {
    all: async <R>(_name: string, text: string, params: readonly unknown[]) =>
      denseRows<R>(await withinBudget(runRead(clients, { sql: text, parameters: params }))),
  });
  const pool: PoolStats = {
    size: poolSize,
    transactionSlots: gate.limit,
    transactions: () => gate.held,
    waiting: () => gate.waiting,
    oldestWaitMs: () => gate.oldestWaitMs(),
    scans: () => clients.scanGate.held,
    scansWaiting: () => clients.scanGate.waiting,
  };
  // The ranked index's upkeep runs after the answers it follows (src/db/rank/append.ts): let it
  // finish. Then every client ends at once, each within CLOSE_TIMEOUT_S (src/db/postgres/close.ts),
  // and the sockets they leave open are closed: a stop fits its limit whether the server answers
  // or not (docs/deploy.md §Start and stop).
  const close = async () => {
    await rankUpkeepSettled();
    await Promise.all([endReplaced(), signals.close(), kysely.destroy()]);
    sockets.destroy();
  };
  return { kysely, dialect: 'postgres', pool, requestBudgetMs: clients.deadlineMs, ...(schema ? { schema } : {}), close };
}
