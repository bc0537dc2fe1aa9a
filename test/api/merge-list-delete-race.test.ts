// A merge or a record delete beside a delete of a list that holds the record (docs/merge.md
// §Links, docs/trash.md §A record in the trash is gone from the live tables): the list's delete
// holds its members' partition until it commits, and the other write, which read the record's
// memberships before that, waits for it. The write then works from the memberships still there:
// the merge answers 200 and moves the others to the primary, never putting it into the list gone;
// the deleted record's entry holds none of that list's memberships, and the list's ranked members
// are left as its delete left them. The list's own entry holds the membership: its restore brings
// back the primary, or the record once that is restored. SQLite has one writer at a time: the
// other write runs after the delete's COMMIT, which is the same outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { partitionKey, write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { LIST_MEMBERS } from '../../src/lists/repository.ts';
import { trashList } from '../../src/trash/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

/**
 * Deletes the list in a transaction that commits once `request`, sent after the delete ran, waits
 * for it (on PostgreSQL; on SQLite the request waits for the one writer).
 */
async function besideListDelete<T>(t: TestApp, workspaceId: string, listId: string, request: () => Promise<T>): Promise<T> {
  let deleted!: () => void;
  const ready = new Promise<void>((ok) => (deleted = ok));
  const deleting = write(t.deps.db.kysely, async (tx) => {
    await trashList(operatorCtx(tx, workspaceId), { id: listId });
    deleted();
    if (t.dialect === 'postgres') assert.ok(await someoneWaits(tx), 'the request waits for the list delete');
  });
  await ready;
  const sent = request();
  await deleting;
  return sent;
}

eachDialect('a merge or a delete beside the delete of a list of the record', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const contact = async (s: Seeded, name: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: name } } })).id as string;
  const list = async (s: Seeded, name: string, members: string[]) =>
    (await ok(s, 'POST', '/v1/lists', { fields: { $name: name, $objectType: 'contact' }, relationships: { $contacts: members } })).id as string;
  /** The list's members as a page shows them, its totalCount and its stored member count. */
  async function members(s: Seeded, id: string) {
    const page = await ok(s, 'GET', `/v1/lists/${id}/contacts`);
    const row = await ctx().deps.db.kysely.selectFrom('lists').select('member_count').where('id', '=', id).executeTakeFirstOrThrow();
    return { ids: page.data.map((r: { id: string }) => r.id).sort(), total: page.totalCount, count: Number(row.member_count) };
  }
  /** Rows a gone list must not have: live memberships and ranked entries. */
  async function leftOf(id: string) {
    const db = ctx().deps.db.kysely;
    const live = await db.selectFrom('list_members').select('entity_id').where('list_id', '=', id).execute();
    const ranked = await sql<{ n: number | string }>`select count(*) as n from rank_buckets where scope = ${partitionKey(LIST_MEMBERS, [id])}`.execute(db);
    return { live: live.length, ranked: Number(ranked.rows[0]?.n) };
  }
  const held = async (trashId: string) =>
    (await ctx().deps.db.kysely.selectFrom('trash_members').select('list_id').where('trash_id', '=', trashId).execute()).map((r) => r.list_id).sort();
  const restore = async (s: Seeded, id: string) => {
    const r = await rolodex(ctx(), ['trash', 'restore', '--workspace', s.workspaceId, id]);
    assert.equal(r.code, 0, r.err);
  };

  test('a merge whose duplicate is in the list deleted meanwhile answers 200 and moves its other memberships', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [primary, duplicate] = [await contact(s, 'Primary'), await contact(s, 'Duplicate')];
    const gone = await list(s, 'Gone', [duplicate]);
    const moved = await list(s, 'Moved', [duplicate]);
    const both = await list(s, 'Both', [primary, duplicate]);
    const r = await besideListDelete(t, s.workspaceId, gone, () =>
      call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary, duplicateId: duplicate }),
    );
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().primary.id, primary);
    assert.deepEqual(await leftOf(gone), { live: 0, ranked: 0 });
    assert.deepEqual(await members(s, moved), { ids: [primary], total: 1, count: 1 });
    assert.deepEqual(await members(s, both), { ids: [primary], total: 1, count: 1 });
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${gone}`)).statusCode, 404);
    // The list's entry holds the duplicate's membership, which stands for the primary.
    await restore(s, gone);
    assert.deepEqual(await members(s, gone), { ids: [primary], total: 1, count: 1 });
  });

  test('the duplicate purged before the list is restored: the membership its entry held still brings the primary back', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [primary, duplicate] = [await contact(s, 'Primary'), await contact(s, 'Duplicate')];
    const gone = await list(s, 'Gone', [duplicate]);
    const r = await besideListDelete(t, s.workspaceId, gone, () =>
      call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary, duplicateId: duplicate }),
    );
    assert.equal(r.statusCode, 200, r.body);
    // The merged duplicate's purge erases the duplicate, not the link that stands for the primary.
    const purged = await rolodex(t, ['trash', 'purge', '--workspace', s.workspaceId, duplicate]);
    assert.equal(purged.code, 0, purged.err);
    const naming = await t.deps.db.kysely.selectFrom('trash_members').select('entity_id').where('trash_id', '=', gone).execute();
    assert.deepEqual(
      naming.map((m) => m.entity_id),
      [primary],
    );
    await restore(s, gone);
    assert.deepEqual(await members(s, gone), { ids: [primary], total: 1, count: 1 });
  });

  test('a delete of a record in the list deleted meanwhile holds none of that list’s memberships', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [ann, bob] = [await contact(s, 'Ann'), await contact(s, 'Bob')];
    const gone = await list(s, 'Gone', [ann, bob]);
    const kept = await list(s, 'Kept', [ann, bob]);
    const r = await besideListDelete(t, s.workspaceId, gone, () => call(t, s.secret, 'DELETE', `/v1/contacts/${ann}`));
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(await leftOf(gone), { live: 0, ranked: 0 });
    assert.deepEqual(await held(ann), [kept]);
    assert.deepEqual(await members(s, kept), { ids: [bob], total: 1, count: 1 });
    await restore(s, ann);
    assert.deepEqual(await members(s, kept), { ids: [ann, bob].sort(), total: 2, count: 2 });
    assert.deepEqual(await leftOf(gone), { live: 0, ranked: 0 });
    await restore(s, gone);
    assert.deepEqual(await members(s, gone), { ids: [ann, bob].sort(), total: 2, count: 2 });
  });
});
