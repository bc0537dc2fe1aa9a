// Migration 0082_file_bytes_changed (docs/files.md §Addresses, docs/deploy.md §Migrations): from a
// database at 0081 holding a COMPLETED file, the file keeps every value and gains no time of a
// change of its bytes (its downloads keep dating from its completion); releases before it run
// beside it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { findFileById } from '../../src/files/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-01-01T00:00:00.000Z';
const DONE = '2026-01-01T00:05:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0082_file_bytes_changed [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0082' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${AT})`.execute(db);
      await sql`insert into files (id, workspace_id, external_id, source, status, filename, mime_type, size_bytes, md5, blob_key, created_at, completed_at, upload_deadline)
        values ('fil_a', 'ws_f', 'a', 'app', 'COMPLETED', 'a.txt', 'text/plain', 3, ${'0'.repeat(32)}, 'ws_f/fil_a', ${AT}, ${DONE}, ${AT})`.execute(db);
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('a file keeps its values and has no time of a change of its bytes', async () => {
      const row = await findFileById(tdb.db.kysely, 'fil_a');
      assert.equal(row?.bytes_changed_at, null);
      assert.equal(row?.completed_at, DONE);
      assert.equal(row?.blob_key, 'ws_f/fil_a');
      assert.equal(Number(row?.size_bytes), 3);
    });

    test('releases before it run beside it', async () => {
      const listed = await sql<{ name: string }>`select name from migrations_run_beside`.execute(tdb.db.kysely);
      assert.ok(listed.rows.some((r) => r.name === '0082_file_bytes_changed'));
    });
  });
}
