// A merge or a record delete beside the delete of a list that holds the record, in either order
// (docs/design.md §Database, "The order of locks"): both take the list's row before its members'
// set, so one waits for the other and neither is cancelled as a deadlock and run again. Played
// on PostgreSQL with the locks held by the test:
// - the list's delete first: the test's transaction takes the delete's first locks (the
//   workspace's lists, the list's row), sends the write, and once the write waits for it deletes
//   the list (its members' set next) and commits;
// - the write first: the test's transaction holds the record's membership of the list, which the
//   write deletes once it holds its locks on the record's lists; the list's delete (an API request)
//   is sent then, and once it waits for the write the membership is let go.
// Both succeed, and the log has no line of a transaction run again. SQLite has one writer at a
// time: the two run one after the other, which is the same outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import * as lists from '../../src/lists/repository.ts';
import { trashList } from '../../src/trash/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

const RERUN = 'the transaction was cancelled by a conflict with another; running it again';

type Answer = Awaited<ReturnType<typeof call>>;

/** The list deleted first, in the test's transaction; `request` is sent once the delete holds the list's row. */
async function listFirst(t: TestApp, s: Seeded, listId: string, request: () => Promise<Answer>): Promise<Answer> {
  let started!: () => void;
  const ready = new Promise<void>((ok) => (started = ok));
  const deleting = write(t.deps.db.kysely, async (tx) => {
    if (t.dialect === 'postgres') {
      await lists.lockLists(tx, s.workspaceId);
      assert.ok(await lists.findListToDelete(tx, s.workspaceId, listId), 'the list is there');
    }
    started();
    if (t.dialect === 'postgres') assert.ok(await waiterOf(tx), 'the write waits for the list delete');
    await trashList(operatorCtx(tx, s.workspaceId), { id: listId });
  });
  await ready;
  const sent = request();
  await deleting;
  return sent;
}

/** `request` first, held before it deletes `memberId`'s memberships; the list's delete is sent meanwhile. */
async function writeFirst(t: TestApp, s: Seeded, memberId: string, listId: string, request: () => Promise<Answer>): Promise<[Answer, Answer]> {
  const deleteList = () => call(t, s.secret, 'DELETE', `/v1/lists/${listId}`);
  if (t.dialect !== 'postgres') {
    const r = await request();
    return [r, await deleteList()];
  }
  let sent!: Promise<Answer>;
  let deleted!: Promise<Answer>;
  await write(t.deps.db.kysely, async (tx) => {
    await sql`select 1 from list_members where list_id = ${listId} and entity_id = ${memberId} for update`.execute(tx);
    sent = request();
    const writer = await waiterOf(tx);
    assert.ok(writer, 'the write waits for the membership');
    deleted = deleteList();
    assert.ok(await waiterOf(tx, writer.pid), 'the list delete waits for the write');
  });
  return [await sent, await deleted];
}

eachDialect('a merge or a record delete beside the delete of a list of the record, in either order', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
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
  /** The memberships an entry holds, as "list member" pairs. */
  const held = async (trashId: string) =>
    (await ctx().deps.db.kysely.selectFrom('trash_members').select(['list_id', 'entity_id']).where('trash_id', '=', trashId).execute())
      .map((r) => `${r.list_id} ${r.entity_id}`)
      .sort();
  const reruns = (from: number) =>
    ctx()
      .logs()
      .slice(from)
      .split('\n')
      .filter((l) => l.includes(RERUN));

  for (const kind of ['delete', 'merge'] as const)
    for (const first of ['list', 'write'] as const)
      test(`a ${kind} of a member and the list's delete, the ${first === 'list' ? "list's delete" : kind} first: both succeed, none runs again`, async () => {
        const t = ctx();
        const s = await seedWorkspace(t);
        const [primary, ann, bob] = [await contact(s, 'Primary'), await contact(s, 'Ann'), await contact(s, 'Bob')];
        const gone = await list(s, 'Gone', [ann, bob]);
        const kept = await list(s, 'Kept', [ann]);
        const from = t.logs().length;
        const request = () =>
          kind === 'delete'
            ? call(t, s.secret, 'DELETE', `/v1/contacts/${ann}`)
            : call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary, duplicateId: ann });
        const [r, deleted] = first === 'list' ? [await listFirst(t, s, gone, request), undefined] : await writeFirst(t, s, ann, gone, request);
        assert.equal(r.statusCode, 200, r.body);
        if (deleted) assert.equal(deleted.statusCode, 200, deleted.body);
        assert.deepEqual(reruns(from), []);

        assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${gone}`)).statusCode, 404);
        assert.equal((await call(t, s.secret, 'GET', `/v1/contacts/${ann}`)).statusCode, 404);
        const stays = kind === 'merge' ? [primary] : [];
        assert.deepEqual(await members(s, kept), { ids: stays, total: stays.length, count: stays.length });
        if (kind === 'merge') {
          // The list's entry holds Ann's membership, or the primary's once the merge moved it;
          // either stands for the primary, whom the list's restore brings back.
          const back = await rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, gone]);
          assert.equal(back.code, 0, back.err);
          const both = [bob, primary].sort();
          assert.deepEqual(await members(s, gone), { ids: both, total: 2, count: 2 });
          return;
        }
        // The list's entry holds Ann's membership when the list left first, and Ann's entry the
        // list's when she left first.
        assert.deepEqual(await held(gone), [bob, ...(first === 'list' ? [ann] : [])].map((m) => `${gone} ${m}`).sort());
        const taken = first === 'list' ? [kept] : [gone, kept];
        assert.deepEqual(await held(ann), taken.map((l) => `${l} ${ann}`).sort());
      });
});
