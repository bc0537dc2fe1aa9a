// Which database a handle talks to. A handle and its transactions share the adapter its dialect
// made, so the answer is read from that object, never guessed from compiled SQL. Only the database
// layer asks (a rule of `npm run deps`); a module says what it means through src/db/portable.ts.
import { PostgresAdapter } from 'kysely';
import { type DialectName, type Executor, type Tx, TX_STATE } from './types.ts';

export function dialectOf(db: Executor): DialectName {
  return (db as Partial<Tx>)[TX_STATE]?.dialect ?? (db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite');
}

export function isPostgres(db: Executor): boolean {
  return dialectOf(db) === 'postgres';
}
