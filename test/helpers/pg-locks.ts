// Row-lock races on PostgreSQL: a transaction that holds a row lets a request queue up behind it.
import { setTimeout as wait } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { type Tx, write } from '../../src/db/index.ts';
import { lockKey } from '../../src/db/rank/lock.ts';
import type { TestApp } from './app.ts';

/**
 * The backend waiting for one of `tx`'s locks (or, given `blocker`, for one of that backend's) and
 * how long it has waited, looked for 10 s at most. PostgreSQL checks a wait for a deadlock once,
 * `deadlock_timeout` (1 s) after it began: a test that closes a cycle later than that makes its
 * own transaction the one cancelled.
 */
export async function waiterOf(tx: Tx, blocker?: number): Promise<{ pid: number; waitedMs: number } | undefined> {
  const of = blocker === undefined ? sql`pg_backend_pid()` : sql`${blocker}::int`;
  for (let i = 0; i < 200; i++) {
    // A transaction reads the activity of other backends once, unless told to read it again.
    await sql`select pg_stat_clear_snapshot()`.execute(tx);
    const r = await sql<{ pid: number; waited: number | null }>`select a.pid,
        extract(epoch from clock_timestamp() - (select min(waitstart) from pg_locks l where l.pid = a.pid and not l.granted)) * 1000 as waited
      from pg_stat_activity a where ${of} = any(pg_blocking_pids(a.pid))`.execute(tx);
    const row = r.rows[0];
    // waitstart is filled in just after a wait begins: missing, the wait has only begun.
    if (row) return { pid: row.pid, waitedMs: Number(row.waited ?? 0) };
    await wait(50);
  }
  return undefined;
}

/** Whether another backend waits for one of `tx`'s locks, within 10 s. */
export async function someoneWaits(tx: Tx): Promise<boolean> {
  return (await waiterOf(tx)) !== undefined;
}

/**
 * Whether another backend asks for the named lock `name` exclusively now (or has just taken it):
 * such a taker tries the lock again after a pause, never waiting in PostgreSQL's queue
 * (`holdNamedLock`, src/db/portable.ts), so no `pg_blocking_pids` names it; its last statement does.
 */
export async function asksNow(tx: Tx, name: string): Promise<boolean> {
  // The key `holdNamedLock` takes for `name`.
  const pattern = `%advisory_xact_lock(${lockKey(`named:${name}`)})%`;
  // A transaction reads the activity of other backends once, unless told to read it again.
  await sql`select pg_stat_clear_snapshot()`.execute(tx);
  const r = await sql`select 1 from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like ${pattern}`.execute(tx);
  return r.rows.length > 0;
}

/** Whether another backend asks for the named lock `name` exclusively (`asksNow`), within 10 s. */
export async function asksFor(tx: Tx, name: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await asksNow(tx, name)) return true;
    await wait(50);
  }
  return false;
}

/** Runs `change` in a transaction that commits only once `request` (sent after it ran) waits for it. */
export async function meanwhile<T>(t: TestApp, change: (tx: Tx) => Promise<unknown>, request: () => Promise<T>): Promise<T> {
  let changed!: () => void;
  const ready = new Promise<void>((ok) => (changed = ok));
  const holder = write(t.deps.db.kysely, async (tx) => {
    await change(tx);
    changed();
    assert.ok(await someoneWaits(tx), 'the request waits for the change');
  });
  await ready;
  const sent = request();
  await holder;
  return sent;
}
