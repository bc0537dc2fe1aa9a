// A list's re-import beside the list's delete and beside a delete of one of its members, in either
// order (docs/design.md §Database, "The order of locks"; docs/import.md §`list`): the import takes
// the list's row against deletion, then its members' set, and only then renames it and changes its
// members and count, as the API's writers of a list do. So neither write waits for the other in a
// circle, none is cancelled as a deadlock and run again, and the import fails only where the list
// was deleted before it wrote it (`was deleted while this import ran; import again`).
//
// On PostgreSQL, for both commit modes, the test's transaction holds one membership of the list
// (Ann's, which both the import and either delete remove): the first write waits for it holding its
// locks of the list, the second is sent and waits for the first, then the membership is let go.
// SQLite has one writer at a time: a batched import's chunks commit one by one, and the delete runs
// as the list's upsert chunk ends (after the import found the list, before it writes it) or after
// the import.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { type Tx, write } from '../../src/db/index.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { type CommitMode, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { trashList, trashRecord } from '../../src/trash/service.ts';
import { buildTestApp, call, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

const RERUN = 'the transaction was cancelled by a conflict with another; running it again';
const DELETED = /line 1: externalId: the list "l-1" was deleted while this import ran; import again/;

const contact = (i: number) => ({ object: 'contact', externalId: `c-${i}`, fields: { $name: { value: { firstName: 'Ann', lastName: `L${i}` } } } });
const list = (name: string, members: string[]) => ({ object: 'list', externalId: 'l-1', name, objectType: 'contact', members });
const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n');

type Answer = { statusCode: number; body: string };
type Other = 'list' | 'member';

interface Setup {
  s: Seeded;
  listId: string;
  /** Contact ids by externalId. */
  c: Record<string, string>;
  /** The last event's seq before the writes under test. */
  seq: number;
}

/** Contacts c-0 (Ann) … c-3 and the list l-1 "Hot" of c-0, c-1 and c-2, imported. */
async function setUp(t: TestApp): Promise<Setup> {
  const s = await seedWorkspace(t);
  const db = t.deps.db.kysely;
  await runImport(operatorCtx(db, s.workspaceId), { kinds: importKinds(), text: ndjson([...[0, 1, 2, 3].map(contact), list('Hot', ['c-0', 'c-1', 'c-2'])]) });
  const records = await db.selectFrom('records').select(['id', 'external_id']).where('workspace_id', '=', s.workspaceId).execute();
  const c = Object.fromEntries(records.map((r) => [r.external_id as string, r.id]));
  const listId = (
    await db.selectFrom('lists').select('id').where('workspace_id', '=', s.workspaceId).where('external_id', '=', 'l-1').executeTakeFirstOrThrow()
  ).id;
  const last = await db
    .selectFrom('events')
    .select(sql<number>`max(seq)`.as('seq'))
    .executeTakeFirstOrThrow();
  return { s, listId, c, seq: Number(last.seq) };
}

/** The import's kinds, `after` running in the transaction of the lists' upsert chunk once it found them. */
function kindsWithHook(afterUpsert?: (tx: Tx) => Promise<unknown>): ImportKind[] {
  return importKinds().map((k) =>
    k.object !== 'list' || !afterUpsert
      ? k
      : {
          ...k,
          upsert: async (ctx, items) => {
            await k.upsert(ctx, items);
            await afterUpsert(ctx.db);
          },
        },
  );
}

/** The re-import of l-1 as "Warm" of c-1, c-2 and c-3: undefined when it succeeds, else its error. */
function reimport(t: TestApp, x: Setup, commit: CommitMode, afterUpsert?: (tx: Tx) => Promise<unknown>): Promise<unknown> {
  const text = ndjson([list('Warm', ['c-1', 'c-2', 'c-3'])]);
  return runImport(operatorCtx(t.deps.db.kysely, x.s.workspaceId), { kinds: kindsWithHook(afterUpsert), text, commit }).then(
    () => undefined,
    (err: unknown) => err,
  );
}

/**
 * On PostgreSQL: the test's transaction holds Ann's membership of the list; `first` is sent and
 * waits for it, `second` is sent and waits for `first`, then the membership is let go.
 */
async function played<A, B>(t: TestApp, x: Setup, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  let one!: Promise<A>;
  let two!: Promise<B>;
  await write(t.deps.db.kysely, async (tx) => {
    await sql`select 1 from list_members where list_id = ${x.listId} and entity_id = ${x.c['c-0']} for update`.execute(tx);
    one = first();
    const waiting = await waiterOf(tx);
    assert.ok(waiting, 'the first write waits for the membership');
    two = second();
    assert.ok(await waiterOf(tx, waiting.pid), 'the second write waits for the first');
  });
  return Promise.all([one, two]);
}

for (const dialect of testDialects())
  describe(`a list's re-import beside the list's delete or a member's delete, in either order [${dialect}]`, () => {
    let app: TestApp | undefined;
    const t = () => app as TestApp;
    before(async () => {
      app = await buildTestApp(dialect);
    });
    after(async () => {
      await app?.close();
    });

    const deleteOf = (x: Setup, other: Other): (() => Promise<Answer>) =>
      other === 'list' ? () => call(t(), x.s.secret, 'DELETE', `/v1/lists/${x.listId}`) : () => call(t(), x.s.secret, 'DELETE', `/v1/contacts/${x.c['c-0']}`);
    const deleteIn = (x: Setup, other: Other) => (tx: Tx) =>
      other === 'list'
        ? trashList(operatorCtx(tx, x.s.workspaceId), { id: x.listId })
        : trashRecord(operatorCtx(tx, x.s.workspaceId), RECORD_TYPES.contact, { id: x.c['c-0']! });

    /** The import's outcome and the delete's answer, the import first or the delete. */
    async function play(x: Setup, mode: CommitMode, other: Other, importFirst: boolean): Promise<[unknown, Answer]> {
      const importing = () => reimport(t(), x, mode);
      if (dialect === 'postgres')
        return importFirst
          ? played(t(), x, importing, deleteOf(x, other))
          : ((await played(t(), x, deleteOf(x, other), importing)).reverse() as [unknown, Answer]);
      if (importFirst) return [await importing(), await deleteOf(x, other)()];
      return [await reimport(t(), x, mode, deleteIn(x, other)), { statusCode: 200, body: '' }];
    }

    /** The list's events after the setup, as [type, members or changes]. */
    async function events(x: Setup) {
      const rows = await t()
        .deps.db.kysely.selectFrom('events')
        .select('body')
        .where('workspace_id', '=', x.s.workspaceId)
        .where('seq', '>', x.seq)
        .orderBy('seq')
        .execute();
      return rows
        .map((r) => JSON.parse(r.body))
        .filter((e) => e.data.object?.id === x.listId && e.type !== 'list.deleted')
        .map((e) => [e.type, e.data.members ?? e.data.changes]);
    }
    /** The list's members as a page shows them, its totalCount and its stored member count. */
    async function members(x: Setup) {
      const page = await call(t(), x.s.secret, 'GET', `/v1/lists/${x.listId}/contacts?limit=25`);
      assert.equal(page.statusCode, 200, page.body);
      const row = await t().deps.db.kysely.selectFrom('lists').select(['name', 'member_count']).where('id', '=', x.listId).executeTakeFirstOrThrow();
      const ids = page.json().data.map((r: { id: string }) => r.id);
      return { name: row.name, ids: ids.sort(), total: page.json().totalCount, count: Number(row.member_count) };
    }
    /** The memberships a trash entry holds, as "list member" pairs. */
    const held = async (trashId: string) =>
      (await t().deps.db.kysely.selectFrom('trash_members').select(['list_id', 'entity_id']).where('trash_id', '=', trashId).execute())
        .map((r) => `${r.list_id} ${r.entity_id}`)
        .sort();
    const reruns = (from: number) =>
      t()
        .logs()
        .slice(from)
        .split('\n')
        .filter((l) => l.includes(RERUN) || l.includes('40P01') || l.includes('deadlock'));

    const modes: CommitMode[] = dialect === 'postgres' ? ['atomic', 'batched'] : ['batched'];
    for (const mode of modes)
      for (const importFirst of [true, false]) {
        const order = importFirst ? 'the import first' : 'the delete first';

        test(`${mode}: the list's delete, ${order}: ${importFirst ? 'both succeed' : 'the import stops cleanly'}, nothing runs again`, async () => {
          const x = await setUp(t());
          const { c, listId } = x;
          const from = t().logs().length;
          const [imported, deleted] = await play(x, mode, 'list', importFirst);
          assert.equal(deleted.statusCode, 200, deleted.body);
          assert.deepEqual(reruns(from), []);
          assert.equal((await call(t(), x.s.secret, 'GET', `/v1/lists/${listId}`)).statusCode, 404);
          const stored = await t().deps.db.kysely.selectFrom('list_members').select('entity_id').where('list_id', '=', listId).execute();
          assert.deepEqual(stored, [], 'no membership of a deleted list');
          if (importFirst) {
            assert.equal(imported, undefined, String(imported));
            // The list left with the import's members, which its entry holds.
            assert.deepEqual(await held(listId), [c['c-1'], c['c-2'], c['c-3']].map((m) => `${listId} ${m}`).sort());
            assert.deepEqual(await events(x), [
              ['list.updated', { $name: { from: 'Hot', to: 'Warm' } }],
              ['list.members_added', [c['c-3']]],
              ['list.members_removed', [c['c-0']]],
            ]);
            return;
          }
          assert.match(String((imported as Error | undefined)?.message), DELETED);
          assert.deepEqual(await held(listId), [c['c-0'], c['c-1'], c['c-2']].map((m) => `${listId} ${m}`).sort());
          assert.deepEqual(await events(x), []);
        });

        test(`${mode}: a member's delete, ${order}: both succeed, nothing runs again`, async () => {
          const x = await setUp(t());
          const { c, listId } = x;
          const from = t().logs().length;
          const [imported, deleted] = await play(x, mode, 'member', importFirst);
          assert.equal(imported, undefined, String(imported));
          assert.equal(deleted.statusCode, 200, deleted.body);
          assert.deepEqual(reruns(from), []);
          const warm = [c['c-1'], c['c-2'], c['c-3']].sort();
          assert.deepEqual(await members(x), { name: 'Warm', ids: warm, total: 3, count: 3 });
          // Ann left the list by the first of the two writes: by the import, or by her delete,
          // whose entry then holds her membership.
          assert.deepEqual(await held(c['c-0']!), importFirst ? [] : [`${listId} ${c['c-0']}`]);
          const renamed = [
            ['list.updated', { $name: { from: 'Hot', to: 'Warm' } }],
            ['list.members_added', [c['c-3']]],
          ];
          const annLeft = ['list.members_removed', [c['c-0']]];
          assert.deepEqual(await events(x), importFirst ? [...renamed, annLeft] : [annLeft, ...renamed]);
        });
      }
  });
