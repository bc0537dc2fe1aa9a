// The lanes a statement takes to PostgreSQL (docs/design.md §Database). postgres.js pipelines:
// every query issued in one turn of the event loop goes out in one socket write, and a connection
// carries many queries at once, answered in order. So:
// - `shared`: every statement outside a transaction but scans, pipelined on one connection
//   (src/db/postgres/open.ts). Its statements are point reads and small writes, each answered in
//   a few milliseconds, so none waits long behind the others.
// - `scan`: the scans outside a transaction (src/db/scan.ts). A scan may run for hundreds of
//   milliseconds, and every statement pipelined behind it on a connection waits until it ends;
//   on the shared connection that was every read of the process. Here each scan has a connection
//   of its own, at most `scanGate.limit` of them at once, and the others wait for a place in order
//   (within the deadline, then 503 as a missed one), not behind one another on a connection.
// - `tx`: a connection reserved by each transaction (src/db/postgres/connection.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { isAbruptConnectionLoss } from '../connection-loss.ts';
import type { Gate } from '../gate.ts';
import { withDeadline } from './deadline.ts';
import type { Refusals } from './refused.ts';
import { budgetLeft } from '../request-budget.ts';

export type Client = postgres.Sql;
export type Reserved = postgres.ReservedSql;
export type Rows = postgres.RowList<postgres.Row[]>;
export type Lane = 'shared' | 'scan' | 'tx';

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * The connections of one process, by lane; `scanGate` lets in at most as many scans as `scan` has
 * connections. `deadlineMs` (0: none) bounds the wait for each statement's answer, for a place
 * and for a connection (src/db/postgres/deadline.ts); `missed` is told of a lane that let a statement
 * miss it, and may replace that lane's client (src/db/postgres/open.ts).
 */
export interface Clients {
  shared: Client;
  scan: Client;
  scanGate: Gate;
  tx: Client;
  deadlineMs: number;
  missed(lane: Lane, client: Client): void;
  /** Connections refused just now (src/db/postgres/refused.ts). */
  refusals: Refusals;
}

/** Runs `send` unless connections were refused just now; a refusal it meets replaces the lane's client. */
export function unlessRefused<T>(clients: Clients, lane: Lane, on: Client, send: () => Promise<T>): Promise<T> {
  const refused = clients.refusals.now();
  if (refused) return Promise.reject(refused);
  const out = send();
  // The caller gets `out` itself: watching it for a refusal adds no step to its answer.
  out.then(undefined, (err: unknown) => {
    if (clients.refusals.saw(err)) clients.missed(lane, on);
  });
  return out;
}

// Every statement this process sends to PostgreSQL goes through run(): a test that checks what a
// request reads from storage, not only what it answers, watches here (test/helpers/sql-spy.ts).
// The observer may return a function, called once the statement's answer came.
type Observer = (sql: string, parameters: readonly unknown[]) => void | (() => void);
let observer: Observer | undefined;

/** Sets (or, with undefined, clears) the one observer of every statement sent to PostgreSQL. */
export function observeStatements(fn: Observer | undefined): void {
  observer = fn;
}

// Prepared: postgres.js sends a statement it has not prepared on that connection as a describe
// and then a bind, in two round trips; a prepared one goes out whole, in one. A statement without
// parameters goes out as simple text (one round trip, and several statements may be given).
export function run(on: Client | Reserved, q: Statement, deadlineMs = 0, missed?: () => void, client?: Client): Promise<Rows> {
  const answered = observer?.(q.sql, q.parameters);
  const query = on.unsafe(q.sql, q.parameters as postgres.ParameterOrJSON<never>[], { prepare: true });
  const out = withDeadline(query, deadlineMs, missed, client);
  if (answered) out.then(answered, answered);
  return out;
}

/** Runs `q` on the lane's client as it is now, within the deadline. */
function runOn(clients: Clients, lane: 'shared' | 'scan', q: Statement): Promise<Rows> {
  const on = clients[lane];
  return unlessRefused(clients, lane, on, () => run(on, q, clients.deadlineMs, () => clients.missed(lane, on), on));
}

/** Runs `q` on the shared connection, within the deadline. */
export function runShared(clients: Clients, q: Statement): Promise<Rows> {
  return runOn(clients, 'shared', q);
}

const RETRY_AFTER_MS = [20, 200];

/**
 * A read outside a transaction whose connection was lost is sent again: reading twice changes
 * nothing, and postgres.js opens a new connection for it. The error can arrive before postgres.js
 * has seen the socket close, and until then it may hand the read to the dying connection once more,
 * so a second try waits a little longer. A write is never sent again, since it may have been
 * applied before the connection went (docs/design.md §Database, "A lost connection").
 */
async function again(send: () => Promise<Rows>): Promise<Rows> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      const wait = RETRY_AFTER_MS[attempt];
      if (wait === undefined || !isAbruptConnectionLoss(err)) throw err;
      await sleep(wait);
    }
  }
}

/**
 * A read on the shared connection, sent again if its connection was lost. Callers: the fast
 * reader, whose statements are reads by contract (on SQLite they run on a read-only connection),
 * and Kysely's selects without a WITH clause, which could hide a write.
 */
export function runRead(clients: Clients, q: Statement): Promise<Rows> {
  return again(() => runOn(clients, 'shared', q));
}

/** A scan (a read by contract, src/db/scan.ts) on the scan lane, once it has a place, sent again if its connection was lost. */
export async function runScan(clients: Clients, q: Statement): Promise<Rows> {
  await clients.scanGate.enter(budgetLeft(clients.deadlineMs));
  try {
    return await again(() => runOn(clients, 'scan', q));
  } finally {
    clients.scanGate.leave();
  }
}
