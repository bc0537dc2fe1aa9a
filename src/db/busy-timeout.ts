// A SQLite connection's busy timeout, changed for one piece of work and put back after it: a
// checkpoint or a journal switch that must not wait in SQLite's busy handler (which sleeps on the
// calling thread) the connection's usual 5 s (src/db/sqlite/settings.ts).
import { sql } from 'kysely';
import type { Executor } from './types.ts';

/** Runs `work` with the busy timeout of `db`'s connection set to `ms`, restored afterwards. */
export async function withBusyTimeout<T>(db: Executor, ms: number, work: () => Promise<T>): Promise<T> {
  const busy = (await sql<{ timeout: number }>`pragma busy_timeout`.execute(db)).rows[0]?.timeout ?? 5000;
  await sql.raw(`pragma busy_timeout = ${ms}`).execute(db);
  try {
    return await work();
  } finally {
    await sql.raw(`pragma busy_timeout = ${Math.trunc(busy)}`).execute(db);
  }
}
