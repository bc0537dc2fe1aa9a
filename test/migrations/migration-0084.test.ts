// Migration 0084_trash_merged (docs/trash.md §Purge, docs/deploy.md §Migrations): from a database
// at 0083 whose trash holds 2,000 entries, a few merged into one record, the entries merged into
// it are found through the new index on both databases, never by a read of the workspace's trash;
// the entries keep every value, and releases before it run beside it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { mergedInto } from '../../src/trash/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { planText } from '../helpers/plans.ts';

const AT = '2026-01-01T00:00:00.000Z';
const N = 2000;

for (const dialect of testDialects()) {
  describe(`migration 0084_trash_merged [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0084' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_t', 't', ${AT})`.execute(db);
      const n = (k: number) => String(k).padStart(5, '0');
      for (let from = 0; from < N; from += 250)
        await db
          .insertInto('trash')
          .values(
            Array.from({ length: 250 }, (_, i) => from + i).map((k) => ({
              id: `con_${n(k)}`,
              workspace_id: 'ws_t',
              object_type: 'contact',
              deleted_at: AT,
              // The first three were merged into con_c; every tenth of the others into one of its own.
              merged_into: k < 3 ? 'con_c' : k % 10 === 0 ? `con_p${n(k)}` : null,
              resource: '{}',
              payload: '{}',
            })),
          )
          .execute();
      await migrate(tdb.db);
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test('the entries merged into a record are found, through the new index', async () => {
      const db = tdb.db.kysely;
      const q = mergedInto(db, 'ws_t', ['con_c']);
      assert.deepEqual(
        (await q.execute()).map((r) => r.id),
        ['con_00000', 'con_00001', 'con_00002'],
      );
      const plan = await planText(db, dialect, q.compile());
      assert.match(plan, /trash_merged/, plan);
      // SQLite names a full read of a table `SCAN <table>`; PostgreSQL `Seq Scan on`.
      assert.doesNotMatch(plan, /SCAN trash\b|Seq Scan on trash\b/, plan);
    });

    test('the entries keep their values, and releases before it run beside it', async () => {
      const db = tdb.db.kysely;
      const row = await db.selectFrom('trash').selectAll().where('id', '=', 'con_00010').executeTakeFirstOrThrow();
      assert.deepEqual(
        { merged_into: row.merged_into, deleted_at: row.deleted_at, object_type: row.object_type },
        { merged_into: 'con_p00010', deleted_at: AT, object_type: 'contact' },
      );
      const listed = await sql<{ name: string }>`select name from migrations_run_beside`.execute(db);
      assert.ok(listed.rows.some((r) => r.name === '0084_trash_merged'));
    });
  });
}
