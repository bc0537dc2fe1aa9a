// What another writer does to an import's records between the import's lookup by externalId and
// its write (docs/import.md §Sharing the database). An import looks up every externalId of a type
// at the type's first chunk and writes each record in its own chunk later; on PostgreSQL it holds
// no lock of the listing meanwhile, and on SQLite beside a server its chunks commit one by one. A
// record it found and that is deleted before its chunk is written stops the import, and so does an
// externalId it did not find and that a record restored from the trash takes before its chunk:
// each named on the line that gives it, and on PostgreSQL nothing written. Checked with the
// contacts' kind wrapped so that another writer acts just before the chunk holding `c-9`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { write } from '../../src/db/write.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';

const contact = (i: number, last: string) => ({
  object: 'contact',
  externalId: `c-${i}`,
  fields: { $name: { value: { firstName: 'Ann', lastName: `${last}${i}` }, valueType: 'FULL_NAME' } },
});

/** The import's kinds, the contacts' running `before` once, just before the chunk that holds c-9 is written. */
function kindsWithHook(before: () => Promise<void>): ImportKind[] {
  let ran = false;
  return importKinds().map((k) =>
    k.object !== 'contact'
      ? k
      : {
          ...k,
          prepare: async (ctx, items) => {
            if (!ran && items.some((i) => i.externalId === 'c-9')) {
              ran = true;
              await before();
            }
            return k.prepare ? k.prepare(ctx, items) : { undo: async () => {} };
          },
        },
  );
}

/** A workspace with the contacts c-0 … c-9 (last names Old0 … Old9), and the id of c-9. */
async function withContacts(t: TestApp): Promise<{ s: Seeded; c9: string }> {
  const s = await seedWorkspace(t);
  const seed = Array.from({ length: 10 }, (_, i) => JSON.stringify(contact(i, 'Old'))).join('\n');
  await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: seed });
  const r = await sql<{ id: string }>`select id from records where workspace_id = ${s.workspaceId} and external_id = 'c-9'`.execute(t.deps.db.kysely);
  return { s, c9: r.rows[0]!.id };
}

async function importAgain(t: TestApp, s: Seeded, before: () => Promise<void>): Promise<unknown> {
  const saved = IMPORT_CHUNK.atomic;
  const savedBatched = IMPORT_CHUNK.batched;
  // Chunks of 4: c-9 is in the third, after the lookups of the first.
  IMPORT_CHUNK.atomic = 4;
  IMPORT_CHUNK.batched = 4;
  try {
    // On PostgreSQL one transaction; on SQLite, beside a server, chunk by chunk (the CLI's default there).
    const commit = t.dialect === 'postgres' ? 'atomic' : 'batched';
    const text = Array.from({ length: 20 }, (_, i) => JSON.stringify(contact(i, 'New'))).join('\n');
    await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: kindsWithHook(before), text, commit });
    return undefined;
  } catch (err) {
    return err;
  } finally {
    IMPORT_CHUNK.atomic = saved;
    IMPORT_CHUNK.batched = savedBatched;
  }
}

async function lastNames(t: TestApp, s: Seeded): Promise<string[]> {
  const r = await call(t, s.secret, 'GET', '/v1/contacts?limit=25');
  assert.equal(r.statusCode, 200, r.body);
  return r
    .json()
    .data.map((c: { fields: { $name: { value: { lastName: string } } } }) => c.fields.$name.value.lastName)
    .sort();
}

eachDialect('an import beside writers that change its records meanwhile', (ctx) => {
  test('a record deleted between the lookup and its chunk stops the import', async () => {
    const t = ctx();
    const { s, c9 } = await withContacts(t);
    const failed = await importAgain(t, s, async () => {
      const r = await call(t, s.secret, 'DELETE', `/v1/contacts/${c9}`);
      assert.equal(r.statusCode, 200, r.body);
    });
    assert.ok(failed instanceof ImportFailed, String(failed));
    assert.match(failed.message, /line 10: externalId: the contact "c-9" was deleted while this import ran; import again/);
    // On PostgreSQL the import wrote nothing; on SQLite its first two chunks had committed.
    if (t.dialect === 'postgres')
      assert.deepEqual(
        await lastNames(t, s),
        Array.from({ length: 9 }, (_, i) => `Old${i}`),
      );
  });

  test('an externalId a restored record takes between the lookup and its chunk stops the import', async () => {
    const t = ctx();
    const { s, c9 } = await withContacts(t);
    const deleted = await call(t, s.secret, 'DELETE', `/v1/contacts/${c9}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    const failed = await importAgain(t, s, async () => {
      await write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: c9 }));
    });
    assert.ok(failed instanceof ImportFailed, String(failed));
    assert.match(failed.message, /line 10: externalId: another contact took "c-9" while this import ran \(restored from the trash\); import again/);
    // One record holds c-9, the restored one; on PostgreSQL nothing of the import was written.
    const holders = await sql<{ id: string }>`select id from records where workspace_id = ${s.workspaceId} and external_id = 'c-9'`.execute(t.deps.db.kysely);
    assert.deepEqual(
      holders.rows.map((r) => r.id),
      [c9],
    );
    if (t.dialect === 'postgres') assert.deepEqual(await lastNames(t, s), Array.from({ length: 10 }, (_, i) => `Old${i}`).sort());
  });
});
