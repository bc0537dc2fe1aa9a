// A database a newer release migrated (docs/deploy.md §Migrations): this version runs on it when it
// holds every migration this version knows, as migrations are additive (a rolling deploy, a
// rollback), and says so; a schema that is neither this version's nor a newer one's stops with
// one clear message. Both used to stop with kysely's "corrupted migrations".
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { migrate, MigrationError, MIGRATIONS } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects()) {
  describe(`migrate() on a database of a newer version [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => tdb.drop());

    test('applies nothing and notes it; refuses when a migration it knows is missing too', async () => {
      const table = sql.table(tdb.db.schema ? `${tdb.db.schema}.kysely_migration` : 'kysely_migration');
      await sql`insert into ${table} (name, timestamp) values ('9999_future', '2099-01-01T00:00:00.000Z')`.execute(tdb.db.kysely);
      takeMigrationNotes();
      assert.deepEqual(await migrate(tdb.db), []);
      const notes = takeMigrationNotes();
      assert.equal(notes.length, 1);
      assert.match(notes[0]!.message, /migrated by a newer version \(9999_future\); this version applies nothing/);

      const last = Object.keys(MIGRATIONS).at(-1)!;
      await sql`delete from ${table} where name = ${last}`.execute(tdb.db.kysely);
      await assert.rejects(migrate(tdb.db), (err: Error) => {
        assert.ok(err instanceof MigrationError);
        assert.equal(
          err.message,
          `the database has migrations this version does not know (9999_future) and lacks some it has (${last}): run the version that migrated it`,
        );
        return true;
      });
    });
  });
}
