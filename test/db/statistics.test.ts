// The planner's statistics (src/db/statistics.ts, docs/design.md §Database statistics). On SQLite
// each index of the tables PRAGMA optimize picks is described from reads and the rows written in
// one short transaction: the statistics are the ones PRAGMA optimize itself writes, and they are
// gathered while another connection holds the write lock; a table under STATISTICS_FLOOR rows
// gets none. On PostgreSQL a bulk write's schema is analyzed.
import assert from 'node:assert/strict';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { refreshStatistics, STATISTICS_FLOOR } from '../../src/db/statistics.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-01-01T00:00:00.000Z';

/** Contacts enough for 3 value rows and 3 postings each to pass the floor, and few enough that the records stay under it. */
const CONTACTS = 7000;

/**
 * A workspace with `n` contacts, each with a name and an e-mail in the value index and postings
 * in the trigram index (a WITHOUT ROWID table, whose row SQLite names after the table); and a table
 * whose only index is partial, whose row count only an ANALYZE of the table itself writes.
 */
async function fill(tdb: TestDb, n: number): Promise<void> {
  const db = tdb.db.kysely;

  await sql`insert into workspaces (id, name, created_at) values ('ws_s', 's', ${AT})`.execute(db);
  for (let from = 0; from < n; from += 500) {
    const ids = Array.from({ length: Math.min(500, n - from) }, (_, k) => `con_${String(from + k).padStart(6, '0')}`);
    await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
      values ${sql.join(ids.map((id) => sql`(${id}, 'ws_s', 'contact', null, '{}', ${AT}, ${AT})`))}`.execute(db);
    const values = ids.flatMap((id, k) => [
      sql`('ws_s', 'contact', '$name', ${`name ${(from + k) % 97}`}, null, ${id})`,
      sql`('ws_s', 'contact', '$email', ${`${id}@example.com`}, null, ${id})`,
      sql`('ws_s', 'contact', 'score', null, ${(from + k) % 10}, ${id})`,
    ]);
    await sql`insert into record_values (workspace_id, object_type, field, value_text, value_num, record_id) values ${sql.join(values)}`.execute(db);
    const postings = ids.flatMap((id, k) => [0, 1, 2].map((t) => sql`(${((from + k) % 40) * 3 + t}, ${id})`));
    await sql`insert into record_trigrams (key, record_id) values ${sql.join(postings)}`.execute(db);
  }
  await sql`create table partial_only (k integer primary key, v text)`.execute(db);
  await sql`create index partial_only_v on partial_only (v) where v is not null`.execute(db);
  await sql`insert into partial_only (k, v)
    select row_number() over (order by record_id, field), case when record_id like '%0' then null else substr(record_id, 1, 8) end from record_values`.execute(
    db,
  );
}

for (const dialect of testDialects()) {
  describe(`statistics [${dialect}]`, () => {
    let whole: TestDb;
    let spread: TestDb;
    let shared: TestDb;
    before(async () => {
      [whole, spread, shared] = await Promise.all([createTestDb(dialect), createTestDb(dialect), createTestDb(dialect)]);
      for (const t of [whole, spread, shared]) await fill(t, CONTACTS);
    });
    after(async () => {
      for (const t of [whole, spread, shared]) await t.drop();
    });

    test('analyzed index by index, the statistics are those of one pass', async () => {
      // The reference: PRAGMA optimize's own pass on SQLite, which the function ran before.
      if (dialect === 'sqlite') {
        await sql`pragma analysis_limit = 1000`.execute(whole.db.kysely);
        await sql`pragma optimize = 0x10002`.execute(whole.db.kysely);
      } else await refreshStatistics(whole.db, { bulk: true });
      await refreshStatistics(spread.db, { bulk: true });
      if (dialect === 'sqlite') {
        const stat = async (t: TestDb) =>
          (await sql<{ tbl: string; idx: string | null; stat: string }>`select tbl, idx, stat from sqlite_stat1 order by tbl, idx`.execute(t.db.kysely)).rows;
        // The table's rows: the first number of its largest row.
        const rowsOf = (rows: Array<{ tbl: string; stat: string }>, tbl: string) =>
          Math.max(...rows.filter((r) => r.tbl === tbl).map((r) => Number(r.stat.split(' ')[0])));
        const all = await stat(whole);
        const one = all.filter((r) => rowsOf(all, r.tbl) >= STATISTICS_FLOOR);
        assert.ok(
          one.some((r) => r.tbl === 'record_values' && r.idx === 'record_values_record'),
          'the value index was analyzed',
        );
        assert.ok(
          one.some((r) => r.tbl === 'partial_only' && r.idx === null),
          "a table with partial indexes only: the table's own row",
        );
        assert.ok(
          all.some((r) => r.tbl === 'records'),
          'PRAGMA optimize analyzes the records too',
        );
        assert.deepEqual(await stat(spread), one, 'the same rows, but none for a table under the floor');
      } else {
        const tuples = async (t: TestDb) =>
          Number((await sql<{ n: number }>`select reltuples as n from pg_class where oid = 'record_values'::regclass`.execute(t.db.kysely)).rows[0]?.n);
        assert.equal(await tuples(whole), 3 * CONTACTS);
        assert.equal(await tuples(spread), 3 * CONTACTS);
      }
    });

    if (dialect === 'sqlite') {
      test('another connection takes the write lock while the indexes are read; the statistics wait for it', async () => {
        const stat = async () => (await sql<{ n: number }>`select count(*) as n from sqlite_stat1`.execute(shared.db.kysely)).rows[0]?.n ?? 0;
        const other = new DatabaseSync(shared.sqliteFile as string, { timeout: 0 });
        other.exec('create table if not exists beside (k integer primary key)');
        // At the first count of an index's entries, the other connection begins a write (refused at
        // once if the lock were held) and keeps it for 100 ms.
        const all = Reflect.get(StatementSync.prototype, 'all') as (...args: unknown[]) => unknown;
        const proto = StatementSync.prototype as unknown as Record<string, unknown>;
        let taken = false;
        let released = false;
        proto.all = function (this: StatementSync, ...args: unknown[]) {
          if (!taken && /count\(\*\)/.test(this.sourceSQL)) {
            taken = true;
            other.exec('begin immediate');
            other.exec('insert into beside default values');
            setTimeout(() => {
              released = true;
              other.exec('commit');
            }, 100);
          }
          return all.apply(this, args);
        };
        try {
          await refreshStatistics(shared.db, { bulk: true });
        } finally {
          proto.all = all;
          if (other.isTransaction) other.exec('rollback');
          other.close();
        }
        assert.ok(taken, 'the indexes are read while the lock is free');
        assert.ok(released, 'the statistics are written once the other write is done');
        assert.ok(Number(await stat()) > 0, 'the rows are written');
        const trigrams = (await sql<{ stat: string }>`select stat from sqlite_stat1 where tbl = 'record_trigrams'`.execute(shared.db.kysely)).rows;
        assert.equal(trigrams.length, 1);
        assert.match(trigrams[0]!.stat, new RegExp(`^${3 * CONTACTS} \\d+ 1$`), 'the postings counted, each (key, record) once');
      });

      test('a table under the floor has no statistics, not even those taken while it was smaller', async () => {
        const db = spread.db.kysely;
        // As if analyzed when it held a few rows (a server started on a young database): it has
        // grown many times over since, so PRAGMA optimize picks it again.
        await sql`delete from sqlite_stat1 where tbl = 'records'`.execute(db);
        await sql`insert into sqlite_stat1 (tbl, idx, stat) values ('records', 'sqlite_autoindex_records_1', '119 1')`.execute(db);
        await refreshStatistics(spread.db);
        const rows = (await sql<{ tbl: string }>`select tbl from sqlite_stat1 where tbl in ('records', 'record_values')`.execute(db)).rows;
        assert.deepEqual(
          rows.map((r) => r.tbl).filter((t) => t === 'records'),
          [],
          `${CONTACTS} records are under the floor of ${STATISTICS_FLOOR}`,
        );
        assert.ok(
          rows.some((r) => r.tbl === 'record_values'),
          'the value index, over the floor, keeps its rows',
        );
      });
    }
  });
}
