// Row-lock races on PostgreSQL: a transaction that holds a row lets a request queue up behind it.
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Tx } from '../../src/db/index.ts';

/** Whether another backend waits for one of `tx`'s locks, within 10 s. */
export async function someoneWaits(tx: Tx): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    await sql`select pg_stat_clear_snapshot()`.execute(tx);
    const r = await sql<{ pid: number }>`select pid from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))`.execute(tx);
    if (r.rows[0]) return true;
    await wait(50);
  }
  return false;
}
