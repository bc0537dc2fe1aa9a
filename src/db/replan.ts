// Other sessions' plans while one transaction grows the tables (docs/design.md §Database
// statistics). PostgreSQL keeps a named statement's generic plan until something invalidates the
// tables it reads; a large transaction's rows change no statistics until it commits, so plans made
// while the tables were small stay. An unchanged setting written again is such an invalidation and
// nothing more: every session plans its statements again at their next run, from the tables' size
// on disk (their pages, the uncommitted rows' included), while the statistics stay as they are
// (an ANALYZE would count only the committed rows, and the pages' density it records would make
// every planner, the growing transaction's own included, take the grown tables for small ones).
import { sql } from 'kysely';
import { isPostgres } from './dialect.ts';
import type { Executor } from './types.ts';

/**
 * Makes every other session plan its statements again (on PostgreSQL; SQLite's planner reads no
 * table sizes). Each table of the schema has its first column's statistics target written again
 * with its own value, which takes a lock that no read or write waits for; a table whose lock is
 * held (a VACUUM on it) is left as it is after 100 ms.
 */
export async function replanOthers(db: Executor): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    do $$
    declare t record;
    begin
      perform set_config('lock_timeout', '100', true);
      for t in
        select c.oid::regclass as rel, a.attname as col, coalesce(a.attstattarget, -1) as target
        from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum = 1
        where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
      loop
        begin
          execute format('alter table %s alter column %I set statistics %s', t.rel, t.col, t.target);
        exception when lock_not_available then null;
        end;
      end loop;
    end $$`.execute(db);
}
