// A batched import finds the records it updates before it takes the write lock (docs/import.md
// §Sharing the database): while another writer holds the lock of the contacts' listing, and on
// SQLite the one writer (another process's), the import's externalIds of contacts and of a custom type's records
// that exist are already looked up and registered with their ids; once the lock is free the
// import updates those records in place and creates the others.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { settled, write } from '../../src/db/index.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField } from '../../src/definitions/service.ts';
import { ImportIds } from '../../src/import/ids.ts';
import { runImport } from '../../src/import/run.ts';
import { type Ctx, operatorCtx } from '../../src/lib/context.ts';
import { lockRecords } from '../../src/records/repository.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';

const ndjson = (objects: unknown[]) => objects.map((o) => JSON.stringify(o)).join('\n');
const contact = (i: number, last: string) => ({ object: 'contact', externalId: `c${i}`, fields: { $name: { value: { firstName: 'Ann', lastName: last } } } });
const project = (i: number, name: string) => ({ object: 'record', objectType: 'project', externalId: `p${i}`, fields: { name: { value: name } } });

/**
 * Holds the write lock of `kind`'s listing until `release`: on SQLite, the one writer's, from a
 * connection of its own as another process would; on PostgreSQL, the listing's lock, in a
 * transaction of the app's.
 */
async function holdLock(t: TestApp, workspaceId: string, kind: string): Promise<{ release: () => Promise<void> }> {
  if (t.tdb.sqliteFile) {
    const other = new DatabaseSync(t.tdb.sqliteFile, { timeout: 5000 });
    other.exec('BEGIN IMMEDIATE');
    return {
      release: async () => {
        if (!other.isOpen) return;
        other.exec('COMMIT');
        other.close();
      },
    };
  }
  let free!: () => void;
  const freed = new Promise<void>((r) => (free = r));
  let taken!: () => void;
  const held = new Promise<void>((r) => (taken = r));
  const holder = write(t.deps.db.kysely, async (tx) => {
    await lockRecords(tx, workspaceId, kind);
    await settled(tx);
    taken();
    await freed;
  });
  await held;
  return {
    release: async () => {
      free();
      await holder;
    },
  };
}

/** Imports `text` batched while another writer holds the lock of `kind`'s listing: whether the import registered `externalId` meanwhile. */
async function importWhileLocked(
  t: TestApp,
  op: Ctx,
  kind: string,
  text: string,
  externalId: string,
  ids: ImportIds,
): Promise<{ found: boolean; counts: Record<string, number> }> {
  const { release } = await holdLock(t, op.actor.workspaceId, kind);
  try {
    const running = runImport(op, { kinds: importKinds(), text, commit: 'batched', ids });
    let found = false;
    for (const deadline = performance.now() + 5000; !found && performance.now() < deadline; await new Promise((r) => setTimeout(r, 10)))
      found = ids.get(kind, externalId) !== undefined;
    await release();
    return { found, counts: (await running).counts };
  } finally {
    await release();
  }
}

eachDialect('a batched import looks up what exists before its transactions', (ctx) => {
  test('the externalIds that exist are registered while another writer holds the lock; then updated in place', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    const first = await runImport(op, { kinds: importKinds(), text: ndjson([contact(1, 'Old'), contact(2, 'Old'), project(1, 'Old')]) });
    const before = first.ids;

    const ids = await ImportIds.open();
    try {
      // A system type and a custom one: each kind looks its types up before its first chunk.
      const contacts = await importWhileLocked(t, op, 'contact', ndjson([contact(1, 'New'), contact(2, 'New'), contact(3, 'New')]), 'c2', ids);
      assert.ok(contacts.found, 'the existing contacts were looked up while the lock was held');
      assert.deepEqual(contacts.counts, { contact: 3 });
      const projects = await importWhileLocked(t, op, 'project', ndjson([project(1, 'New'), project(2, 'New')]), 'p1', ids);
      assert.ok(projects.found, 'the existing projects were looked up while the lock was held');
      assert.deepEqual(projects.counts, { record: 2 });
      assert.equal(ids.get('contact', 'c1'), before.contact!.c1);
      assert.equal(ids.get('contact', 'c2'), before.contact!.c2);
      assert.equal(ids.get('project', 'p1'), before.project!.p1);
    } finally {
      await ids.close();
    }

    const contacts = await call(t, s.secret, 'GET', '/v1/contacts?limit=10');
    assert.equal(contacts.json().totalCount, 3);
    for (const c of contacts.json().data) assert.equal(c.fields.$name.value.lastName, 'New');
    const updated = await call(t, s.secret, 'GET', `/v1/contacts/${before.contact!.c1}`);
    assert.equal(updated.json().fields.$name.value.lastName, 'New');
    const projects = await call(t, s.secret, 'GET', '/v1/objects/project?limit=10');
    assert.equal(projects.statusCode, 200, projects.body);
    assert.deepEqual(
      projects.json().data.map((r: { fields: { name: { value: string } } }) => r.fields.name.value),
      ['New', 'New'],
    );
  });
});
