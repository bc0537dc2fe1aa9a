// Kysely over postgres.js (docs/design.md §Database). postgres.js pipelines: every query issued in
// one turn of the event loop goes out in one socket write, and a connection carries many queries
// at once. So a query outside a transaction takes no connection of its own: it goes to the shared
// client, which spreads queries over its few connections, or, a scan, to the scan lane
// (src/db/postgres/lanes.ts). A transaction reserves a connection of its own from a third client, so
// that transactions waiting on each other's locks never leave reads without a connection, and a
// Gate makes them wait in order for one.
//
// The shared client keeps few connections (PIPELINED): postgres.js sends a query to an idle
// connection first and opens a new one while it may, so under load a larger pool spreads the same
// queries over more connections, each a socket write, a read and a wake-up of its own backend
// process per batch. On few connections each socket write carries more statements, so the server
// spends less CPU per pipelined read (docs/performance.md §Pipelined PostgreSQL connections).
//
// Inside a transaction, a statement marked with `deferred()` (src/db/pipeline.ts) is not sent on
// its own: it goes out with the next statement that is awaited, or with COMMIT, in one write, and
// BEGIN goes out with the first statement. A transaction holding a lock thus waits for one round
// trip per statement whose answer it needs, not one per statement.
import {
  AbortedTransactionError,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { Dialect, Kysely, TransactionSettings } from 'kysely';
import { endClient } from './close.ts';
import { DeadlineError, denseRows, withDeadline } from './deadline.ts';
import { type Client, type Clients, type Reserved, type Rows, run, runRead, runScan, runShared, unlessRefused } from './lanes.ts';
import { budgetLeft, withinBudget } from '../request-budget.ts';
import { isScan } from '../scan.ts';
import type { Gate } from '../gate.ts';
import { GroupCommit, groupable } from './group-commit.ts';
import { isDeferred, markQueued, settleQueued, wantsRows } from '../pipeline.ts';

function isPlainSelect(query: CompiledQuery): boolean {
  const node = query.query;
  return node.kind === 'SelectQueryNode' && node.with === undefined;
}

// Rows as plain arrays, as pg gave them (postgres.js returns an Array subclass with extra members).
function toResult<R>(r: Rows): QueryResult<R> {
  const rows = denseRows<R>(r);
  const command = r.command;
  if (command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE') return { numAffectedRows: BigInt(r.count), rows };
  return { rows };
}

// Round trips of transactions, counted for tests that check how often a write waits on the server.
let transactionWrites = 0;

/** How many writes transactions have sent so far (each answered in one round trip). */
export function transactionRoundTrips(): number {
  return transactionWrites;
}

// postgres.js writes its buffer to the socket at once when it reaches 1 KiB, and what is buffered
// after that only at the next setImmediate: a transaction's batch over 1 KiB would go out in two
// writes, the second (often COMMIT) a turn of the event loop later. Under load that turn takes
// milliseconds, which PostgreSQL would spend idle in the transaction, holding its locks and its
// connection (docs/performance.md §Batches written at once). A batch therefore ends with a
// statement of at least 1 KiB, which
// postgres.js writes at once with everything before it: COMMIT with a padding comment, or, after
// a statement with parameters, an empty one. test/guards/pg-batch-writes.test.ts watches the writes.
const PADDING = `/*${' '.repeat(1024)}*/`;

function flushing(queries: CompiledQuery[]): { batch: CompiledQuery[]; padded: boolean } {
  const last = queries.at(-1);
  if (last && last.parameters.length === 0) return { batch: [...queries.slice(0, -1), CompiledQuery.raw(`${last.sql} ${PADDING}`)], padded: false };
  return { batch: [...queries, CompiledQuery.raw(PADDING)], padded: true };
}

// Consecutive statements without parameters whose answer nobody reads (BEGIN and a partition's lock,
// src/db/rank/lock.ts) go out as one simple query: each statement sent on its own costs the
// process CPU in postgres.js (building its messages, reading its answer) whatever it does
// (docs/performance.md §Fewer statements per create). Only those: postgres.js
// merges the answers of such a query in ways that do not map back to its statements (statements
// without rows fold into the next one's), so a statement whose answer is read (the one awaited,
// COMMIT, one sent with deferredRows) goes out on its own. A failure aborts the transaction
// whichever way its statements went out.
interface Group {
  sql: string;
  parameters: readonly unknown[];
  count: number;
  /** Without parameters, and nobody reads its answer: may take the next such statement. */
  open: boolean;
}

function grouped(batch: CompiledQuery[], read: (i: number) => boolean): Group[] {
  const out: Group[] = [];
  batch.forEach((q, i) => {
    const open = q.parameters.length === 0 && !read(i);
    const last = out.at(-1);
    if (last?.open && open) {
      last.sql += `;\n${q.sql}`;
      last.count++;
    } else out.push({ sql: q.sql, parameters: q.parameters, count: 1, open });
  });
  return out;
}

/** Runs `queries` in one write; fails with the first failure (later ones only report the abort). */
async function sendAll(on: Lease, queries: CompiledQuery[]): Promise<Rows[]> {
  transactionWrites++;
  const { batch, padded } = flushing(queries);
  // The last statement (the one awaited, or COMMIT) and the padding after it are read.
  const groups = grouped(batch, (i) => i >= queries.length - 1 || wantsRows(queries[i]!));
  const settled = await Promise.allSettled(groups.map((q) => run(on.reserved, q, on.deadlineMs, on.missed, on.from)));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  const results: Rows[] = [];
  settled.forEach((s, i) => {
    const rows = (s as PromiseFulfilledResult<Rows>).value;
    // A group's statements are read by nobody: each stands for its place.
    for (let k = 0; k < groups[i]!.count; k++) results.push(rows);
  });
  if (padded) results.pop();
  results.forEach((r, i) => settleQueued(queries[i]!, r));
  return results;
}

/** Sends `queued` (BEGIN first) and COMMIT in one write; fails if PostgreSQL rolled it back. */
async function commitAll(on: Lease, queued: CompiledQuery[]): Promise<void> {
  const results = await sendAll(on, [...queued, CompiledQuery.raw('commit')]);
  // PostgreSQL answers COMMIT with ROLLBACK when an earlier error aborted the transaction.
  if (results.at(-1)?.command === 'ROLLBACK') throw new AbortedTransactionError();
}

/** A connection reserved for one transaction, with the deadline of its statements. */
interface Lease {
  reserved: Reserved;
  from: Client;
  deadlineMs: number;
  missed: () => void;
}

/** A connection of `clients.tx`, or DeadlineError when none comes in time (one that comes late goes back). */
async function lease(clients: Clients, waitMs: number): Promise<Lease> {
  const from = clients.tx;
  const missed = () => clients.missed('tx', from);
  let pending: Promise<Reserved> | undefined;
  try {
    const reserved = await withinBudget(unlessRefused(clients, 'tx', from, () => withDeadline((pending = from.reserve()), waitMs, missed, from)));
    return { reserved, from, deadlineMs: clients.deadlineMs, missed };
  } catch (err) {
    // A connection that comes after its wait was given up goes back at once.
    if (err instanceof DeadlineError)
      pending?.then(
        (r) => r.release(),
        () => {},
      );
    throw err;
  }
}

/**
 * A transaction under way: its connection, the statements not sent yet (BEGIN first), whether any
 * went out, the parameters of the queued ones, and the batches sent without waiting (see EAGER).
 */
interface OpenTx {
  lease: Lease;
  queued: CompiledQuery[];
  sent: boolean;
  weight: number;
  inFlight: Promise<unknown>[];
}

/**
 * Deferred statements go out without waiting once their parameters reach this many: a bulk write
 * (an import's multi-row inserts, docs/import.md §Speed) then runs on the server while the caller
 * builds its next rows, instead of waiting, queued, for the next statement awaited, as on SQLite
 * its writer thread does. postgres.js keeps a connection's statements in order, so the next
 * statement awaited (or COMMIT) still runs after them, and the first failure of such a batch is
 * that statement's failure. A request's few small statements never reach it. At most `batches`
 * such batches are in flight: the caller then waits for them (and gets their failure), so that a
 * writer faster than the server holds a bounded amount of its statements in memory.
 */
export const EAGER = { params: 20_000, batches: 8 };

/** Waits for the batches sent without waiting; throws the first failure among them. */
async function landed(tx: OpenTx): Promise<void> {
  if (tx.inFlight.length === 0) return;
  const sent = tx.inFlight;
  tx.inFlight = [];
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

class PostgresJsConnection implements DatabaseConnection {
  readonly #clients: Clients;
  readonly #gate: Gate;
  readonly #group: GroupCommit<Lease>;
  #tx: OpenTx | undefined;

  constructor(clients: Clients, gate: Gate, group: GroupCommit<Lease>) {
    this.#clients = clients;
    this.#gate = gate;
    this.#group = group;
  }

  async begin(settings: TransactionSettings): Promise<void> {
    // One deadline for the place in line and the connection together.
    const deadline = this.#clients.deadlineMs;
    const started = performance.now();
    await this.#gate.enter(budgetLeft(deadline));
    try {
      const leased = await lease(this.#clients, deadline && Math.max(1, deadline - (performance.now() - started)));
      let begin = 'begin';
      if (settings.isolationLevel) begin += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) begin += ` ${settings.accessMode}`;
      this.#tx = { lease: leased, queued: [CompiledQuery.raw(begin)], sent: false, weight: 0, inFlight: [] };
    } catch (err) {
      this.#gate.leave();
      throw err;
    }
  }

  /** COMMIT or ROLLBACK, then the connection goes back to the pool. */
  async end(command: 'commit' | 'rollback'): Promise<void> {
    const tx = this.#tx;
    if (!tx) return;
    this.#tx = undefined;
    const ended = this.#send(tx, command).finally(() => {
      // Only once COMMIT or ROLLBACK has its answer: the connection goes back with no transaction open.
      tx.lease.reserved.release();
      this.#gate.leave();
    });
    await withinBudget(ended);
  }

  async #send(tx: OpenTx, command: 'commit' | 'rollback'): Promise<void> {
    // Nothing sent yet: no transaction on the server to roll back, nor any statement to commit.
    if (!tx.sent && (command === 'rollback' || tx.queued.length === 1)) return;
    if (command === 'rollback') {
      await Promise.allSettled(tx.inFlight);
      await sendAll(tx.lease, [CompiledQuery.raw('rollback')]);
    } else if (!tx.sent && groupable(tx.queued)) await this.#group.commit(tx.lease, tx.queued);
    else {
      const committed = commitAll(tx.lease, tx.queued);
      committed.catch(() => {});
      // A failure of a batch sent without waiting is the commit's failure (PostgreSQL rolled back).
      await landed(tx);
      await committed;
    }
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const tx = this.#tx;
    if (!tx) return toResult<R>(await withinBudget((isScan(query) ? runScan : isPlainSelect(query) ? runRead : runShared)(this.#clients, query)));
    if (isDeferred(query)) {
      markQueued(query);
      tx.queued.push(query);
      tx.weight += query.parameters.length;
      if (tx.weight >= EAGER.params) {
        const sent = sendAll(tx.lease, tx.queued);
        // Read by the next statement awaited, or by COMMIT (landed).
        sent.catch(() => {});
        tx.inFlight.push(sent);
        tx.queued = [];
        tx.weight = 0;
        tx.sent = true;
        if (tx.inFlight.length >= EAGER.batches) await landed(tx);
      }
      return { rows: [] };
    }
    const batch = [...tx.queued, query];
    tx.queued = [];
    tx.weight = 0;
    tx.sent = true;
    const answered = withinBudget(sendAll(tx.lease, batch));
    answered.catch(() => {});
    // A request's statements send no eager batch: they pass without an extra turn.
    if (tx.inFlight.length > 0) await landed(tx);
    return toResult<R>((await answered).at(-1)!);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported');
  }
}

class PostgresJsDriver implements Driver {
  readonly #clients: Clients;
  readonly #gate: Gate;
  readonly #group = new GroupCommit<Lease>(commitAll);

  constructor(clients: Clients, gate: Gate) {
    this.#clients = clients;
    this.#gate = gate;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PostgresJsConnection(this.#clients, this.#gate, this.#group);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PostgresJsConnection).begin(settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).end('commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).end('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // A transaction that neither committed nor rolled back (its callback never returned) still
    // gives its connection back.
    await (connection as PostgresJsConnection).end('rollback');
  }

  async destroy(): Promise<void> {
    const { shared, scan, tx } = this.#clients;
    await Promise.all([endClient(shared), endClient(scan), endClient(tx)]);
  }
}

export class PostgresJsDialect implements Dialect {
  readonly #clients: Clients;
  readonly #gate: Gate;

  constructor(clients: Clients, gate: Gate) {
    this.#clients = clients;
    this.#gate = gate;
  }

  createDriver(): Driver {
    return new PostgresJsDriver(this.#clients, this.#gate);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  createAdapter() {
    return new PostgresAdapter();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}
