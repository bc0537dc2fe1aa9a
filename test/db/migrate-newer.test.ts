// A database a newer release migrated (docs/deploy.md §Migrations): this version runs on it when it
// holds every migration this version knows and the newer ones are listed as run beside by older
// releases (src/db/run-beside.ts), and says so; a newer migration not listed, whose schema this
// version's writes would leave wrong, and a schema that is neither this version's nor a newer one's,
// each stop it with one clear line before anything is written.
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

    const table = (name: string) => sql.table(tdb.db.schema ? `${tdb.db.schema}.${name}` : name);
    const applyFuture = async (name: string) =>
      sql`insert into ${table('kysely_migration')} (name, timestamp) values (${name}, '2099-01-01T00:00:00.000Z')`.execute(tdb.db.kysely);
    const rows = async () => (await sql<{ n: number }>`select count(*) as n from ${table('kysely_migration')}`.execute(tdb.db.kysely)).rows[0]!.n;

    test('a newer migration listed as run beside: applies nothing and notes it', async () => {
      await applyFuture('9998_future_index');
      await sql`insert into ${table('migrations_run_beside')} (name) values ('9998_future_index')`.execute(tdb.db.kysely);
      takeMigrationNotes();
      assert.deepEqual(await migrate(tdb.db), []);
      const notes = takeMigrationNotes();
      assert.equal(notes.length, 1);
      assert.match(notes[0]!.message, /migrated by a newer version \(9998_future_index\); this version applies nothing/);
    });

    test('a newer migration not listed: refuses with one line, and writes nothing', async () => {
      await applyFuture('9999_future_table');
      const before = await rows();
      await assert.rejects(migrate(tdb.db), (err: Error) => {
        assert.ok(err instanceof MigrationError);
        assert.equal(
          err.message,
          'the database was migrated by a newer version (9999_future_table) that this version cannot run beside: run that version or a newer one',
        );
        return true;
      });
      assert.equal(await rows(), before);
    });

    test('refuses when a migration it knows is missing too', async () => {
      const last = Object.keys(MIGRATIONS).at(-1)!;
      await sql`delete from ${table('kysely_migration')} where name = ${last}`.execute(tdb.db.kysely);
      await assert.rejects(migrate(tdb.db), (err: Error) => {
        assert.ok(err instanceof MigrationError);
        assert.equal(
          err.message,
          `the database has migrations this version does not know (9998_future_index, 9999_future_table) and lacks some it has (${last}): run the version that migrated it`,
        );
        return true;
      });
    });
  });
}
