// migrate() tries again only when Kysely's introspection tripped over another database's schema
// being dropped on the same server (CI saw both wordings PostgreSQL uses), never on its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isForeignSchemaRace } from '../../src/db/migrate.ts';

test('a schema or relation of another database that vanished is a race; one of our own is not', () => {
  const own = 't_own';
  assert.equal(isForeignSchemaRace(new Error('schema "t_b12aad10550e" does not exist'), own), true);
  assert.equal(isForeignSchemaRace(new Error('migration  failed: relation "t_6d2c85351050.message_files" does not exist'), own), true);
  assert.equal(isForeignSchemaRace(new Error("migration  failed: Cannot read properties of undefined (reading 'nspname')"), own), true);
  assert.equal(isForeignSchemaRace(new Error("Cannot read properties of undefined (reading 'name')"), own), false);
  // The migrator's own read of the catalogue (no migration named), seen in CI: retried.
  assert.equal(isForeignSchemaRace(new Error('migration  failed: column "workspace_id" of relation "record_trigrams" does not exist'), own), true);
  // The same from a migration's own statement is that migration's failure.
  assert.equal(
    isForeignSchemaRace(new Error('migration 0012_filter_index failed: column "workspace_id" of relation "record_trigrams" does not exist'), own),
    false,
  );
  assert.equal(isForeignSchemaRace(new Error('schema "t_own" does not exist'), own), false);
  assert.equal(isForeignSchemaRace(new Error('relation "t_own.lists" does not exist'), own), false);
  assert.equal(isForeignSchemaRace(new Error('relation "lists" does not exist'), own), false);
  assert.equal(isForeignSchemaRace(new Error('duplicate key value violates unique constraint'), own), false);
});
