// An update of a list that a delete moves to the trash meanwhile (docs/trash.md §A record in the trash is gone from the live tables): on
// PostgreSQL the update reads the list locked against deletion, so it either commits before the
// delete (which then trashes the list as updated) or waits for it and finds the list gone (404).
// It never answers 200 for a change that no list holds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { trashList } from '../../src/trash/service.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

/**
 * Sends `request` while a delete of the list has done its work (its row gone, its members taken,
 * the locks of both held) and not yet committed, and lets it commit once the request waits for it
 * (or after 10 s, when it never does). A request that read the list without its lock would read it
 * live and go on to write it (docs/trash.md §A record in the trash is gone from the live tables).
 */
async function besideDelete<T>(t: TestApp, workspaceId: string, listId: string, request: () => Promise<T>): Promise<T> {
  let held!: () => void;
  const holding = new Promise<void>((ok) => (held = ok));
  const deleting = write(t.deps.db.kysely, async (tx) => {
    await trashList({ ...operatorCtx(tx, workspaceId), db: tx }, { id: listId });
    held();
    assert.ok(await someoneWaits(tx), 'the request waits for the delete');
  });
  await holding;
  const sent = request();
  await deleting;
  return sent;
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`an update of a list deleted meanwhile [${dialect}]`, () => {
    test('a rename waits for the delete and answers 404; the trashed list keeps its name', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Old', $objectType: 'contact' } })).json();
        const r = await besideDelete(t, s.workspaceId, list.id, () => call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { fields: { $name: 'New' } }));
        assert.equal(r.statusCode, 404, r.body);
        assert.equal(r.json().error.code, 'resource_not_found');
        const held = await t.deps.db.kysely.selectFrom('trash').select('payload').where('id', '=', list.id).executeTakeFirstOrThrow();
        assert.equal((JSON.parse(held.payload) as { list: { name: string } }).list.name, 'Old');
      } finally {
        await t.close();
      }
    });

    test('adding members waits for the delete and answers 404, never 500', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const contact = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: 'Lee' } } })).json();
        const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Hot', $objectType: 'contact' } })).json();
        const r = await besideDelete(t, s.workspaceId, list.id, () =>
          call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $contacts: { add: contact.id } } }),
        );
        assert.equal(r.statusCode, 404, r.body);
        const held = await t.deps.db.kysely.selectFrom('trash_members').select('entity_id').where('trash_id', '=', list.id).execute();
        assert.deepEqual(held, []);
      } finally {
        await t.close();
      }
    });
  });
