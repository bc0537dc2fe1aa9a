// Scans: reads that may go through many rows whatever their page holds, a filtered listing's
// matches and their count (docs/design.md §Database, "Scans"). On PostgreSQL, outside a
// transaction, a scan goes on a lane of its own instead of the connection every other statement
// outside a transaction is pipelined on (src/db/postgres/lanes.ts): a scan of hundreds of milliseconds
// there held every point read sent after it until it finished. On SQLite, outside a transaction,
// a scan runs on a thread of its own (src/db/sqlite/scan.ts), not on the main thread. Inside a
// transaction a scan runs as any other statement: it reads what the transaction wrote.
import type { Compilable, CompiledQuery, RawBuilder } from 'kysely';
import type { Executor } from './types.ts';

const scans = new WeakSet<CompiledQuery>();

type Scanner = <R>(sql: string, params: readonly unknown[]) => Promise<R[]>;
const scanners = new WeakMap<object, Scanner>();

/** Called by openDb: scans on this handle (not its transactions) are read by `scanner`, not sent through Kysely. */
export function registerScanner(db: Executor, scanner: Scanner): void {
  scanners.set(db, scanner);
}

/** Whether `query` was sent by `scan`. */
export function isScan(query: CompiledQuery): boolean {
  return scans.has(query);
}

/** The rows of `query`, a read that may go through many rows, sent as a scan. */
export async function scan<R>(db: Executor, query: Compilable<R> | RawBuilder<R>): Promise<R[]> {
  const compiled = 'isRawBuilder' in query ? query.compile(db) : query.compile();
  const scanner = scanners.get(db);
  if (scanner) return scanner<R>(compiled.sql, compiled.parameters);
  if (!db.isTransaction) scans.add(compiled);
  return (await db.executeQuery<R>(compiled)).rows;
}
