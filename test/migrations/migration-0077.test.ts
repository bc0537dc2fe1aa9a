// Migration 0077_run_beside (docs/deploy.md §Migrations): from a database at 0076 holding a key the
// idempotency layer stored, it adds the list of migrations older releases run beside, and lists
// itself, so that the release before it (which knows up to 0076) still runs on the migrated
// database and says so, while a newer migration left off the list stops this release with one line.
// A second migrate applies nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate, MigrationError, MIGRATIONS } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-01-01T00:00:00.000Z';
const through = (last: string) => Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= last));
const through0076 = through('0076_trash_transcripts');
// The release that brought 0077: later migrations are not its own.
const through0077 = through('0077_run_beside');

for (const dialect of testDialects()) {
  describe(`migration 0077_run_beside [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0077' });
      await sql`insert into workspaces (id, name, created_at) values ('ws_u', 'u', ${AT})`.execute(tdb.db.kysely);
      await sql`insert into idempotency_keys (workspace_id, operation, key, fingerprint, state, status_code, body, locked_at, created_at)
        values ('ws_u', 'createList', 'k', 'f', 'done', 200, '{"id":"lst_1"}', ${AT}, ${AT})`.execute(tdb.db.kysely);
    });
    after(async () => tdb.drop());

    test('lists itself, keeps the data, and a second migrate applies nothing', async () => {
      takeMigrationNotes();
      assert.deepEqual(await migrate(tdb.db, through0077), ['0077_run_beside']);
      const listed = await sql<{ name: string }>`select name from migrations_run_beside`.execute(tdb.db.kysely);
      assert.deepEqual(
        listed.rows.map((r) => r.name),
        ['0077_run_beside'],
      );
      const key = await sql<{ body: string }>`select body from idempotency_keys where key = 'k'`.execute(tdb.db.kysely);
      assert.equal(key.rows[0]?.body, '{"id":"lst_1"}');
      assert.deepEqual(await migrate(tdb.db, through0077), []);
    });

    test('the release before it runs on the migrated database and says so', async () => {
      takeMigrationNotes();
      assert.deepEqual(await migrate(tdb.db, through0076), []);
      assert.match(takeMigrationNotes()[0]?.message ?? '', /migrated by a newer version \(0077_run_beside\); this version applies nothing and runs on it/);
    });

    test('a newer migration that is not listed stops this release with one line', async () => {
      await sql`insert into kysely_migration (name, timestamp) values ('9999_unlisted', ${AT})`.execute(tdb.db.kysely);
      await assert.rejects(
        migrate(tdb.db, through0077),
        (err: Error) =>
          err instanceof MigrationError && !err.message.includes('\n') && err.message.includes('(9999_unlisted) that this version cannot run beside'),
      );
    });
  });
}
