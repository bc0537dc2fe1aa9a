// SQLite with its writing connection on a thread of its own, for `rolodex import`
// (docs/import.md §Speed). node:sqlite runs a statement on the thread that calls it, so on the
// main thread an import's JavaScript (checking values, building rows and postings) and SQLite's
// writes of those rows take turns on one core. Here statements go to the thread in order; a
// deferred statement (src/db/pipeline.ts: the multi-row inserts of src/db/insert-rows.ts) is sent
// without waiting for it inside a transaction, so the next batch is built while SQLite writes the
// last one. As on PostgreSQL, a deferred statement's error is the error of the next statement
// awaited, or of COMMIT. At most THREAD_QUEUE's count and bytes of them wait at a time: memory
// stays bounded by a few batches, not by the file. If the thread dies, every statement after fails.
import { Worker } from 'node:worker_threads';
import { CompiledQuery, type DatabaseConnection, type DialectAdapter, type Driver, type QueryResult, SqliteAdapter } from 'kysely';
import { isDeferred, markQueued, settleQueued, wantsRows } from '../pipeline.ts';
import { NodeSqliteDialect } from './connection.ts';
import type { Reply, Request, ThreadError } from './writer-thread.ts';

/**
 * Deferred statements sent and not yet run, at most: a few batches of rows (docs/import.md
 * §Speed), and at most about `bytes` of their text and values, which wait as copies in the
 * process's memory until the thread takes them (docs/import.md §Memory); a statement larger than
 * that goes alone. Tests make them smaller.
 */
export const THREAD_QUEUE = { statements: 64, bytes: 4 * 2 ** 20 };

/** About how many bytes a statement's copy for the thread takes: its text and values. */
function weight(q: CompiledQuery): number {
  let n = q.sql.length;
  for (const p of q.parameters) n += typeof p === 'string' ? p.length : 8;
  return n;
}
/**
 * The writer thread's young generation, in MB. What the thread allocates (a statement's
 * parameters, the rows read) dies with the statement, so a small young generation costs it
 * short collections only, where the process's V8 flags would give it 2 × 16 MB (docs/import.md §Memory).
 */
export const THREAD_YOUNG_MB = 8;

function rebuild(e: ThreadError): Error {
  return Object.assign(new Error(e.message), { name: e.name, code: e.code, errcode: e.errcode, errstr: e.errstr });
}

class ThreadConnection implements DatabaseConnection {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (r: Reply) => void; reject: (err: unknown) => void }>();
  readonly #queued = new Map<number, CompiledQuery>();
  #next = 1;
  #inFlight = 0;
  /** The weights of the deferred statements in flight, in the order sent (the thread answers in order). */
  readonly #weights: number[] = [];
  #bytes = 0;
  #room: (() => void) | undefined;
  #broken: Error | undefined;
  inTransaction = false;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (m: Reply) => {
      const queued = 'id' in m ? this.#queued.get(m.id) : undefined;
      if (queued !== undefined && 'rows' in m) {
        this.#queued.delete(m.id);
        settleQueued(queued, m.rows);
      }
      if ('done' in m || queued !== undefined) {
        this.#inFlight--;
        this.#bytes -= this.#weights.shift() ?? 0;
        const room = this.#room;
        this.#room = undefined;
        room?.();
        return;
      }
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      w?.resolve(m);
    });
    worker.on('error', (err) => this.#failAll(err));
    worker.on('exit', () => this.#failAll(new Error('the SQLite writer thread exited')));
  }

  /** The transaction ended: every reply of it came, except those of statements skipped after an error. */
  endTransaction(): void {
    this.inTransaction = false;
    this.#queued.clear();
  }

  #failAll(err: unknown): void {
    this.#broken ??= err instanceof Error ? err : new Error(String(err));
    for (const w of this.#waiting.values()) w.reject(err);
    this.#waiting.clear();
    this.#room?.();
  }

  /** Whether a deferred statement of weight `w` waits for room: the thread has enough queued. */
  #full(w: number): boolean {
    return this.#inFlight >= THREAD_QUEUE.statements || (this.#inFlight > 0 && this.#bytes + w > THREAD_QUEUE.bytes);
  }

  /** Resolves once the thread answered `id -1` (it opened the database) or failed. */
  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.set(-1, { resolve: () => resolve(), reject });
    });
  }

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const request: Request = { id: 0, sql: q.sql, params: q.parameters };
    if (this.inTransaction && isDeferred(q)) {
      const w = weight(q);
      while (this.#full(w) && this.#broken === undefined) await new Promise<void>((r) => (this.#room = r));
      if (this.#broken !== undefined) throw this.#broken;
      this.#inFlight++;
      this.#weights.push(w);
      this.#bytes += w;
      // Rows read after COMMIT (deferredRows) come back with an id of their own, as on PostgreSQL.
      if (wantsRows(q)) {
        request.id = this.#next++;
        request.queued = true;
        markQueued(q);
        this.#queued.set(request.id, q);
      }
      this.#worker.postMessage(request);
      return { rows: [] };
    }
    if (this.#broken !== undefined) throw this.#broken;
    request.id = this.#next++;
    const reply = await new Promise<Reply>((resolve, reject) => {
      this.#waiting.set(request.id, { resolve, reject });
      this.#worker.postMessage(request);
    });
    if ('error' in reply) throw rebuild(reply.error);
    if ('done' in reply) throw new Error('unexpected reply');
    const out: QueryResult<R> = { rows: reply.rows as R[] };
    if (reply.changes !== undefined) Object.assign(out, { numAffectedRows: BigInt(reply.changes), insertId: BigInt(reply.lastInsertRowid ?? 0) });
    return out;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite writer thread does not stream');
  }

  async close(): Promise<void> {
    if (this.#broken !== undefined) return;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.#worker.postMessage('close');
    await exited;
  }
}

/** COMMIT or ROLLBACK (never deferred, so awaited); the transaction's state is cleared whatever its outcome. */
async function end(c: ThreadConnection, verb: 'commit' | 'rollback'): Promise<void> {
  try {
    await c.executeQuery(CompiledQuery.raw(verb));
  } finally {
    c.endTransaction();
  }
}

class ThreadDriver implements Driver {
  readonly #file: string;
  #connection: ThreadConnection | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  async init(): Promise<void> {
    const worker = new Worker(new URL('./writer-thread.ts', import.meta.url), {
      workerData: { file: this.#file },
      resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_MB },
    });
    const connection = new ThreadConnection(worker);
    await connection.ready();
    this.#connection = connection;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection!;
  }

  async beginTransaction(c: ThreadConnection): Promise<void> {
    // BEGIN IMMEDIATE, as src/db/sqlite/connection.ts: several processes sharing the file queue for the lock.
    await c.executeQuery(CompiledQuery.raw('begin immediate'));
    c.inTransaction = true;
  }

  commitTransaction(c: ThreadConnection): Promise<void> {
    return end(c, 'commit');
  }

  rollbackTransaction(c: ThreadConnection): Promise<void> {
    return end(c, 'rollback');
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#connection?.close();
    this.#connection = undefined;
  }
}

/**
 * NodeSqliteDialect whose statements, reads included, run on the writer thread: its process then
 * holds one connection to the file, which lets `rolodex import` write through a rollback journal
 * when nothing else has the database open (docs/import.md §Speed). src/db/database.ts gives such a
 * handle no fast reader.
 */
export class ThreadedSqliteDialect extends NodeSqliteDialect {
  /** Kysely's own queue of the connection's callers, in arrival order: `rolodex import` has no background work. */
  override createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  override createDriver(): Driver {
    return new ThreadDriver(this.file);
  }
}
