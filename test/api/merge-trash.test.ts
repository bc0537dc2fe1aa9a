// A merge beside the trash (docs/merge.md §Links, docs/trash.md §Restore) on both databases: rows
// and memberships held in the trash for other trashed records name the primary after a merge, one
// row where a record held both (has_one: one row, has_many: the union, a list: one membership), so
// the trashed record is restored with every link exactly once. A restore also folds held rows
// that repeat one link (as a merge left them before it deduplicated them), instead of failing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { write } from '../../src/db/write.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('merge beside the trash', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const restoreAs = (s: Seeded, id: string) => write(ctx().deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
  const values = async (s: Seeded, url: string, name: string): Promise<string[]> => (await ok(s, 'GET', url)).relationships[name].values;

  test('has_one: two opportunities of one trashed account merge; the account is restored with one link', async () => {
    const s = await seedWorkspace(ctx());
    const ax = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'AX' } });
    const ox = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'OX', $stage: 'Lead' }, relationships: { $account: ax.id } });
    const oy = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'OY', $stage: 'Lead' }, relationships: { $account: ax.id } });
    await ok(s, 'DELETE', `/v1/accounts/${ax.id}`);
    await ok(s, 'POST', '/v1/opportunities/merge', { primaryId: ox.id, duplicateId: oy.id });
    await restoreAs(s, ax.id);
    assert.deepEqual(await values(s, `/v1/opportunities/${ox.id}`, '$account'), [ax.id]);
    assert.deepEqual(await values(s, `/v1/accounts/${ax.id}`, '$opportunity'), [ox.id]);
  });

  test('has_many: two contacts of one trashed account merge; the account comes back once, after the live links', async () => {
    const s = await seedWorkspace(ctx());
    const [az, aw] = [await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'AZ' } }), await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'AW' } })];
    const cx = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'X' } }, relationships: { $account: [az.id] } });
    const cy = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Y' } }, relationships: { $account: [az.id, aw.id] } });
    await ok(s, 'DELETE', `/v1/accounts/${az.id}`);
    await ok(s, 'POST', '/v1/contacts/merge', { primaryId: cx.id, duplicateId: cy.id });
    assert.deepEqual(await values(s, `/v1/contacts/${cx.id}`, '$account'), [aw.id]);
    await restoreAs(s, az.id);
    assert.deepEqual(await values(s, `/v1/contacts/${cx.id}`, '$account'), [aw.id, az.id]);
    assert.deepEqual(await values(s, `/v1/accounts/${az.id}`, '$contact'), [cx.id]);
    assert.deepEqual(await values(s, `/v1/accounts/${aw.id}`, '$contact'), [cx.id]);
  });

  test('a trashed list that held both keeps one membership, the primary', async () => {
    const s = await seedWorkspace(ctx());
    const [cx, cy, cz] = await Promise.all(['X', 'Y', 'Z'].map((n) => ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })));
    const ll = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'LL', $objectType: 'contact' }, relationships: { $contacts: [cx.id, cy.id, cz.id] } });
    await ok(s, 'DELETE', `/v1/lists/${ll.id}`);
    await ok(s, 'POST', '/v1/contacts/merge', { primaryId: cx.id, duplicateId: cy.id });
    await restoreAs(s, ll.id);
    const page = await ok(s, 'GET', `/v1/lists/${ll.id}/contacts`);
    assert.deepEqual([page.data.map((r: { id: string }) => r.id).sort(), page.totalCount], [[cx.id, cz.id].sort(), 2]);
  });

  test('a trashed note linked to both contacts names the primary once after the merge and the restore', async () => {
    const s = await seedWorkspace(ctx());
    const [c3, c4] = await Promise.all(['C3', 'C4'].map((n) => ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })));
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [c3.id, c4.id] } });
    await ok(s, 'DELETE', `/v1/notes/${note.id}`);
    await ok(s, 'POST', '/v1/contacts/merge', { primaryId: c3.id, duplicateId: c4.id });
    await restoreAs(s, note.id);
    assert.deepEqual(await values(s, `/v1/notes/${note.id}`, '$contact'), [c3.id]);
    assert.deepEqual(await values(s, `/v1/contacts/${c3.id}`, '$note'), [note.id]);
  });

  test('a restore folds held rows and memberships that repeat one link', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    const ax = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'AX' } });
    const [c1, c2] = await Promise.all(['1', '2'].map((n) => ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })));
    const ox = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'OX', $stage: 'Lead' }, relationships: { $account: ax.id } });
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [c1.id, c2.id] } });
    const ll = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'LL', $objectType: 'contact' }, relationships: { $contacts: [c1.id] } });
    for (const r of [ax, note, ll]) await ok(s, 'DELETE', `/v1/${r.id === ax.id ? 'accounts' : r.id === note.id ? 'notes' : 'lists'}/${r.id}`);
    // What a merge left before it deduplicated: the same link twice under one entry.
    await db
      .insertInto('trash_links')
      .values({ trash_id: ax.id, source_id: ox.id, name: '$account', object_type: 'account', target_id: ax.id, position: 0 })
      .execute();
    await db
      .insertInto('trash_links')
      .values({ trash_id: note.id, source_id: note.id, name: '$contact', object_type: 'contact', target_id: c1.id, position: 2 })
      .execute();
    const member = await db.selectFrom('trash_members').selectAll().where('trash_id', '=', ll.id).executeTakeFirstOrThrow();
    await db.insertInto('trash_members').values(member).execute();
    for (const r of [ax, note, ll]) await restoreAs(s, r.id);
    assert.deepEqual(await values(s, `/v1/opportunities/${ox.id}`, '$account'), [ax.id]);
    assert.deepEqual(await values(s, `/v1/notes/${note.id}`, '$contact'), [c1.id, c2.id]);
    const page = await ok(s, 'GET', `/v1/lists/${ll.id}/contacts`);
    assert.deepEqual([page.data.map((r: { id: string }) => r.id), page.totalCount], [[c1.id], 1]);
  });
});
