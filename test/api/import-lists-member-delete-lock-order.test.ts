// A re-import of several lists beside the delete of a record that is a member of each of them, in
// either order (docs/design.md §Database, "The order of locks"): both lock the lists' members' sets
// in list id order, the import whatever the order of its lines, so neither waits for the other in
// a circle and none is cancelled as a deadlock and run again.
//
// On PostgreSQL, for both commit modes, the test's transaction holds the members' set of the
// middle list by id, as a writer of that list does: the first write takes the first list's set
// and waits for it, the second is sent and waits for the first (for the first list's set), then
// the set is let go. Had either taken the sets in another order (the import in its lines'), each
// would hold a set the other waits for. SQLite has one writer at a time: the two run one after
// the other.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { settled, write } from '../../src/db/index.ts';
import { type CommitMode, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { listsToChange } from '../../src/lists/repository.ts';
import { buildTestApp, call, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

const RERUN = 'the transaction was cancelled by a conflict with another; running it again';

const contact = (i: number) => ({ object: 'contact', externalId: `c-${i}`, fields: { $name: { value: { firstName: 'Ann', lastName: `L${i}` } } } });
const list = (externalId: string, name: string, members: string[]) => ({ object: 'list', externalId, name, objectType: 'contact', members });
const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n');

type Answer = { statusCode: number; body: string };

interface Setup {
  s: Seeded;
  /** The lists' ids in id order, and their externalIds by id. */
  ids: string[];
  ext: Map<string, string>;
  /** Contact ids by externalId. */
  c: Record<string, string>;
}

const EXTERNAL = ['l-1', 'l-2', 'l-3'];

/** Contacts c-0 (Ann) … c-3 and three lists of c-0, c-1 and c-2, imported. */
async function setUp(t: TestApp): Promise<Setup> {
  const s = await seedWorkspace(t);
  const db = t.deps.db.kysely;
  const lines = [...[0, 1, 2, 3].map(contact), ...EXTERNAL.map((e) => list(e, `Hot ${e}`, ['c-0', 'c-1', 'c-2']))];
  await runImport(operatorCtx(db, s.workspaceId), { kinds: importKinds(), text: ndjson(lines) });
  const records = await db.selectFrom('records').select(['id', 'external_id']).where('workspace_id', '=', s.workspaceId).execute();
  const c = Object.fromEntries(records.map((r) => [r.external_id as string, r.id]));
  const rows = await db.selectFrom('lists').select(['id', 'external_id']).where('workspace_id', '=', s.workspaceId).orderBy('id').execute();
  return { s, ids: rows.map((r) => r.id), ext: new Map(rows.map((r) => [r.id, r.external_id as string])), c };
}

/**
 * The re-import of the three lists, each renamed "Warm …" with c-1, c-2 and c-3 (Ann leaves), its
 * lines in the reverse of the lists' id order: undefined when it succeeds, else its error.
 */
function reimport(t: TestApp, x: Setup, commit: CommitMode): Promise<unknown> {
  const lines = [...x.ids].reverse().map((id) => list(x.ext.get(id)!, `Warm ${x.ext.get(id)}`, ['c-1', 'c-2', 'c-3']));
  return runImport(operatorCtx(t.deps.db.kysely, x.s.workspaceId), { kinds: importKinds(), text: ndjson(lines), commit }).then(
    () => undefined,
    (err: unknown) => err,
  );
}

/**
 * On PostgreSQL: the test's transaction holds the middle list's members' set; `first` is sent and
 * waits for it, `second` is sent and waits for `first`, then the set is let go.
 */
async function played<A, B>(t: TestApp, x: Setup, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  let one!: Promise<A>;
  let two!: Promise<B>;
  await write(t.deps.db.kysely, async (tx) => {
    assert.equal((await listsToChange(tx, x.s.workspaceId, [x.ids[1]!])).size, 1);
    await settled(tx);
    one = first();
    const waiting = await waiterOf(tx);
    assert.ok(waiting, 'the first write waits for the middle set');
    two = second();
    assert.ok(await waiterOf(tx, waiting.pid), 'the second write waits for the first');
  });
  return Promise.all([one, two]);
}

for (const dialect of testDialects())
  describe(`a re-import of several lists beside the delete of a member of each, in either order [${dialect}]`, () => {
    let app: TestApp | undefined;
    const t = () => app as TestApp;
    before(async () => {
      app = await buildTestApp(dialect);
    });
    after(async () => {
      await app?.close();
    });

    /** The import's outcome and the delete's answer, the import first or the delete. */
    async function play(x: Setup, mode: CommitMode, importFirst: boolean): Promise<[unknown, Answer]> {
      const importing = () => reimport(t(), x, mode);
      const deleting = () => call(t(), x.s.secret, 'DELETE', `/v1/contacts/${x.c['c-0']}`);
      if (dialect === 'postgres')
        return importFirst ? played(t(), x, importing, deleting) : ((await played(t(), x, deleting, importing)).reverse() as [unknown, Answer]);
      if (importFirst) return [await importing(), await deleting()];
      const deleted = await deleting();
      return [await importing(), deleted];
    }

    /** Each list's name, members as a page shows them, totalCount and stored member count. */
    async function lists(x: Setup) {
      const out = [];
      for (const id of x.ids) {
        const page = await call(t(), x.s.secret, 'GET', `/v1/lists/${id}/contacts?limit=25`);
        assert.equal(page.statusCode, 200, page.body);
        const row = await t().deps.db.kysely.selectFrom('lists').select(['name', 'member_count']).where('id', '=', id).executeTakeFirstOrThrow();
        const ids = page.json().data.map((r: { id: string }) => r.id);
        out.push({ name: row.name, ids: ids.sort(), total: page.json().totalCount, count: Number(row.member_count) });
      }
      return out;
    }
    const reruns = (from: number) =>
      t()
        .logs()
        .slice(from)
        .split('\n')
        .filter((l) => l.includes(RERUN) || l.includes('40P01') || l.includes('deadlock'));

    const modes: CommitMode[] = dialect === 'postgres' ? ['atomic', 'batched'] : ['batched'];
    for (const mode of modes)
      for (const importFirst of [true, false])
        test(`${mode}: ${importFirst ? 'the import' : 'the delete'} first: both succeed, nothing runs again`, async () => {
          const x = await setUp(t());
          const { c, ids } = x;
          assert.equal(new Set(ids).size, 3, 'three lists, which the import names in the reverse of their id order');
          const ann = c['c-0']!;
          const from = t().logs().length;
          const [imported, deleted] = await play(x, mode, importFirst);
          assert.equal(imported, undefined, String(imported));
          assert.equal(deleted.statusCode, 200, deleted.body);
          assert.deepEqual(reruns(from), []);
          const warm = [c['c-1'], c['c-2'], c['c-3']].sort();
          assert.deepEqual(
            await lists(x),
            ids.map((id) => ({ name: `Warm ${x.ext.get(id)}`, ids: warm, total: 3, count: 3 })),
          );
          // Ann left every list by the first of the two writes: by the import, or by her delete,
          // whose entry then holds her memberships.
          const held = await t().deps.db.kysely.selectFrom('trash_members').select(['list_id', 'entity_id']).where('trash_id', '=', ann).execute();
          assert.deepEqual(held.map((r) => r.list_id).sort(), importFirst ? [] : ids);
          const stored = await t().deps.db.kysely.selectFrom('list_members').select('list_id').where('entity_id', '=', ann).execute();
          assert.deepEqual(stored, []);
          assert.equal((await call(t(), x.s.secret, 'GET', `/v1/contacts/${ann}`)).statusCode, 404);
        });
  });
