// Kysely over the built-in node:sqlite. Kysely's SqliteDialect expects a better-sqlite3-like
// database; this adapts DatabaseSync to it (with its statements cached, src/db/sqlite/cached.ts),
// and starts write transactions with BEGIN IMMEDIATE so that several processes sharing one file
// queue on the busy timeout instead of failing on lock upgrade.
import { DatabaseSync } from 'node:sqlite';
import { CachedDatabase, openConnection } from './cached.ts';
import { BUSY_TIMEOUT_MS } from './settings.ts';
import { ReadSlotPin } from './pin.ts';
import { ScanThread } from './scan.ts';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
} from 'kysely';
import { SqliteGroupCommit } from './group-commit.ts';
import { WriterTurn } from '../background.ts';

const SQLITE_BUSY = 5;
const CLOSED = 'the SQLite connection closed before the transaction committed';

/**
 * BEGIN IMMEDIATE, waiting for the write lock without blocking the event loop. SQLite's own busy
 * handler sleeps on the calling thread, between tries up to 100 ms apart: while another process
 * (a batched `rolodex import`) holds the lock, every request of the server, reads included, would
 * stand still, and a writer that tries every 100 ms seldom finds the lock free between two of the
 * import's transactions (docs/import.md §Sharing the database). Here the BEGIN does not wait
 * inside SQLite: it is tried again a few milliseconds later, for up to BUSY_TIMEOUT_MS, while the
 * process serves other requests.
 */
export async function beginImmediate(raw: DatabaseSync, timeoutMs = BUSY_TIMEOUT_MS): Promise<void> {
  raw.exec('PRAGMA busy_timeout = 0');
  try {
    const deadline = performance.now() + timeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 4)) {
      try {
        raw.exec('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        if ((err as { errcode?: number }).errcode !== SQLITE_BUSY || performance.now() >= deadline) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  } finally {
    raw.exec(`PRAGMA busy_timeout = ${timeoutMs}`);
  }
}

/**
 * Kysely queues the callers of a single connection itself, in arrival order; here the driver does,
 * so that background work lets requests go first (src/db/background.ts).
 */
class WriterTurnAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/**
 * One holder's use of the writing connection, from acquire to release: whether it is inside a
 * transaction, and whether its transaction handed the connection on to a group commit.
 */
class Holding implements DatabaseConnection {
  inTx = false;
  handedOver = false;
  readonly raw: DatabaseSync;
  readonly #inner: DatabaseConnection;
  readonly #outside: () => void;

  constructor(raw: DatabaseSync, inner: DatabaseConnection, outside: () => void) {
    this.raw = raw;
    this.#inner = inner;
    this.#outside = outside;
  }

  executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.inTx) this.#outside();
    return this.#inner.executeQuery(q);
  }

  streamQuery<R>(q: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!this.inTx) this.#outside();
    return this.#inner.streamQuery(q, chunkSize);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #open: () => Promise<CachedDatabase>;
  readonly #turn = new WriterTurn();
  readonly #group = new SqliteGroupCommit();
  #flushing = false;

  constructor(open: () => Promise<CachedDatabase>) {
    super({ database: open });
    this.#open = open;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turn.enter();
    const raw = (await this.#open()).raw;
    // A statement outside a transaction sees only what is committed, as it would without groups.
    return new Holding(raw, await super.acquireConnection(), () => this.#group.commit(raw));
  }

  // Kysely hands back the connection acquireConnection returned (SqliteDriver declares no parameter).
  override async releaseConnection(c?: DatabaseConnection): Promise<void> {
    if (!(c as Holding).handedOver) this.#turn.leave();
  }

  override async beginTransaction(c: Holding): Promise<void> {
    await this.#group.begin(c.raw, () => beginImmediate(c.raw));
    c.inTx = true;
  }

  override async commitTransaction(c: Holding): Promise<void> {
    const raw = c.raw;
    c.inTx = false;
    const committed = this.#group.end(raw);
    if (this.#group.full || !this.#group.open) {
      this.#group.commit(raw);
    } else {
      // The transactions that start before the next turn of the event loop join the group.
      c.handedOver = true;
      this.#turn.leave();
      this.#flushSoon(raw);
    }
    await committed;
  }

  override async rollbackTransaction(c: Holding): Promise<void> {
    if (!c.inTx) return;
    c.inTx = false;
    this.#group.rollback(c.raw);
  }

  /**
   * Before the connection closes: COMMITs the open group, or fails its members when one is under way
   * (closing rolls the transaction back), so that none of them waits for ever.
   */
  settle(raw: DatabaseSync): void {
    if (!this.#turn.held) this.#group.commit(raw);
    else this.#group.fail(new Error(CLOSED));
  }

  #flushSoon(raw: DatabaseSync): void {
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => {
      void this.#turn.enter(true).then(() => {
        this.#flushing = false;
        try {
          if (raw.isOpen) this.#group.commit(raw);
          else this.#group.fail(new Error(CLOSED));
        } finally {
          this.#turn.leave();
        }
      });
    });
  }
}

export class NodeSqliteDialect extends SqliteDialect {
  readonly #file: string;
  readonly #readOnly: boolean;
  #db: CachedDatabase | undefined;
  #reader: CachedDatabase | undefined;
  #pin: ReadSlotPin | undefined;
  #scans: ScanThread | undefined;
  #driver: ImmediateSqliteDriver | undefined;

  /** `readOnly`: the one connection is read-only and has no writing connection's settings. */
  constructor(file: string, opts: { readOnly?: boolean } = {}) {
    // The writing connection is opened by createDriver below, when Kysely first needs it: a
    // subclass whose driver writes elsewhere (src/db/sqlite/writer.ts) never opens it, so that it
    // is the only connection of its process to the file.
    super({ database: () => Promise.reject(new Error('unused: createDriver opens the connection')) });
    this.#file = file;
    this.#readOnly = opts.readOnly === true;
  }

  /** The database file. */
  get file(): string {
    return this.#file;
  }

  /**
   * The read-only connection of src/db/prepared.ts, opened on first use (after migrations, by a
   * process that serves reads), with the pin of src/db/sqlite/pin.ts.
   */
  get reader(): CachedDatabase {
    if (!this.#reader) {
      // The writing connection first: opening it sets WAL, and puts back the pages of an import
      // killed under a rollback journal (docs/import.md §Speed), which a read-only one cannot.
      this.#db ??= openConnection(this.#file);
      this.#reader = new CachedDatabase(new DatabaseSync(this.#file, { readOnly: true, timeout: BUSY_TIMEOUT_MS }));
      this.#pin = new ReadSlotPin(this.#file);
    }
    return this.#reader;
  }

  /**
   * The thread that runs scans outside a transaction (src/db/sqlite/scan.ts), made after the
   * writing connection, as the reader is.
   */
  get scans(): ScanThread {
    if (!this.#scans) {
      this.#db ??= openConnection(this.#file);
      this.#scans = new ScanThread(this.#file);
    }
    return this.#scans;
  }

  /** Closes every connection; the read-only ones first, as they cannot checkpoint. */
  close(): void {
    this.#scans?.close();
    this.#scans = undefined;
    this.#pin?.close();
    this.#pin = undefined;
    this.#reader?.close();
    this.#reader = undefined;
    if (this.#db) this.#driver?.settle(this.#db.raw);
    this.#db?.close();
  }

  override createAdapter(): DialectAdapter {
    return new WriterTurnAdapter();
  }

  override createDriver(): Driver {
    const open = this.#readOnly
      ? () => new CachedDatabase(new DatabaseSync(this.#file, { readOnly: true, timeout: BUSY_TIMEOUT_MS }))
      : () => openConnection(this.#file);
    this.#driver = new ImmediateSqliteDriver(async () => (this.#db ??= open()));
    return this.#driver;
  }
}
