// Row-lock races on PostgreSQL: a transaction that holds a row lets a request queue up behind it.
import { setTimeout as wait } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { type Tx, write } from '../../src/db/index.ts';
import type { TestApp } from './app.ts';

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
