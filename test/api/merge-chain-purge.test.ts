// A purge of a chain of merged duplicates (docs/trash.md §Purge, docs/merge.md §Links): a list
// holding A is deleted while A is merged into C, so that on PostgreSQL the list's entry holds its
// membership under A's id (test/api/merge-list-delete-race.test.ts); then C is merged into D. A
// and C purged together, by the operator (named, or by age) or by the sweeper, leave the list's
// membership naming D, the end of the chain outside the purge, whatever order the entries come in.
// When the chain ends at a record purged with them or before, the membership is erased as that
// record's are. C purged alone points A at D (`rolodex trash list`, A's refused restore), so that
// A's later purge, or the list's restore, still brings the membership to D, also when it runs
// beside the purge of C; C's end purged before it leaves A naming C. SQLite has one writer at a time: the merge runs after the list delete's COMMIT and
// renames its membership to C, which the second merge renames to D, the same outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Tx, write } from '../../src/db/index.ts';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { mergeRecords } from '../../src/merges/service.ts';
import { RECORD_TYPES } from '../../src/records/resource.ts';
import { purge } from '../../src/trash/purge.ts';
import { trashList } from '../../src/trash/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

const DAY = 86_400_000;
/** The merges happen ten days back, so that a purge by age takes them and not the list's entry. */
const PAST = () => Date.now() - 10 * DAY;

eachDialect('a purge of a chain of merged duplicates', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const contact = async (s: Seeded, n: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).id as string;
  /** Merges `duplicate` into `primary` ten days back. */
  const merge = (t: TestApp, s: Seeded, primaryId: string, duplicateId: string) =>
    write(t.deps.db.kysely, (tx: Tx) => mergeRecords(operatorCtx(tx, s.workspaceId, { now: PAST() }), RECORD_TYPES.contact, { primaryId, duplicateId }));
  async function trash(s: Seeded, sub: 'purge' | 'restore', args: string[]) {
    const r = await rolodex(ctx(), ['trash', sub, '--workspace', s.workspaceId, ...args]);
    assert.equal(r.code, 0, r.err);
  }
  /** The held rows and memberships that name one of `ids`, whichever entry holds them. */
  async function naming(ids: string[]) {
    const db = ctx().deps.db.kysely;
    const links = await db
      .selectFrom('trash_links')
      .select('trash_id')
      .where((eb) => eb.or([eb('source_id', 'in', ids), eb('target_id', 'in', ids)]))
      .execute();
    const members = await db.selectFrom('trash_members').select('trash_id').where('entity_id', 'in', ids).execute();
    return links.length + members.length;
  }
  const members = async (s: Seeded, list: string) => (await ok(s, 'GET', `/v1/lists/${list}/contacts`)).data.map((r: { id: string }) => r.id);
  /**
   * Contacts C, A and D (C's id sorts before A's: a purge of named entries takes them in the order
   * of their ids, C first, a purge by age in the order of their deletion, A first), and a list of
   * A (and C, `withC`), deleted while A is merged into C: the merge waits for the delete on PostgreSQL, and its
   * renames of the held rows have run by then. The list's entry holds A's membership there.
   */
  async function chain(t: TestApp, s: Seeded, opts: { withC?: boolean } = {}) {
    const c = await contact(s, 'C');
    const a = await contact(s, 'A');
    const d = await contact(s, 'D');
    const held = opts.withC ? [a, c] : [a];
    const list = (await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: held } })).id as string;
    let deleted!: () => void;
    const ready = new Promise<void>((done) => (deleted = done));
    const deleting = write(t.deps.db.kysely, async (tx) => {
      await trashList(operatorCtx(tx, s.workspaceId), { id: list });
      deleted();
      if (t.dialect === 'postgres') assert.ok(await someoneWaits(tx), 'the merge waits for the list delete');
    });
    await ready;
    const merging = merge(t, s, c, a);
    await deleting;
    await merging;
    return { a, c, d, list };
  }

  const purges: [string, (t: TestApp, s: Seeded, ids: string[]) => Promise<void>][] = [
    ['rolodex trash purge naming both', (_t, s, ids) => trash(s, 'purge', ids)],
    ['rolodex trash purge --older-than', (_t, s) => trash(s, 'purge', ['--older-than', '5d'])],
    [
      'the sweeper',
      async (t) => {
        await sweepOnce({ db: t.deps.db.kysely, now: Date.now(), files: filesEnv(t.config, t.deps.blobs) }, { trashRetentionDays: 5 });
      },
    ],
  ];
  for (const [by, purge] of purges)
    test(`${by}: the membership held for the first duplicate names the end of the chain`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const { a, c, d, list } = await chain(t, s);
      await merge(t, s, d, c);
      await purge(t, s, [a, c]);
      for (const id of [a, c]) assert.equal((await call(t, s.secret, 'GET', `/v1/contacts/${id}`)).statusCode, 404);
      assert.equal(await naming([a, c]), 0);
      await trash(s, 'restore', [list]);
      assert.deepEqual(await members(s, list), [d]);
    });

  test('a list of A and C: its membership of C became D, and that of A is dropped for it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, d, list } = await chain(t, s, { withC: true });
    await merge(t, s, d, c);
    await trash(s, 'purge', [a, c]);
    assert.equal(await naming([a, c]), 0);
    // One membership for one member, as among live rows.
    const held = await t.deps.db.kysely.selectFrom('trash_members').select('entity_id').where('trash_id', '=', list).execute();
    assert.deepEqual(
      held.map((m) => m.entity_id),
      [d],
    );
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), [d]);
  });

  /** `rolodex trash list --json`: each entry's id and the primary it went into. */
  async function listed(s: Seeded) {
    const r = await rolodex(ctx(), ['trash', 'list', '--workspace', s.workspaceId, '--json']);
    assert.equal(r.code, 0, r.err);
    return new Map((JSON.parse(r.out) as { id: string; mergedInto: string | null }[]).map((e) => [e.id, e.mergedInto]));
  }

  test('a middle entry purged alone: A then names the end of the chain, and its purge renames the membership to it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, d, list } = await chain(t, s);
    await merge(t, s, d, c);
    await trash(s, 'purge', [c]);
    assert.equal((await listed(s)).get(a), d);
    const refused = await rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, a]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, new RegExp(`${a} was merged into ${d};`));
    await trash(s, 'purge', [a]);
    assert.equal(await naming([a, c]), 0);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), [d]);
  });

  test('a middle entry purged alone: a restore of the list brings its membership back as D', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { c, d, list } = await chain(t, s);
    await merge(t, s, d, c);
    await trash(s, 'purge', [c]);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), [d]);
  });

  /**
   * Runs `beside` while a purge of C alone holds its locks: on PostgreSQL it waits for that purge,
   * then reads A as it committed it. SQLite has one writer, which the CLI's connection would wait
   * for on this thread: it runs after the purge's COMMIT.
   */
  async function besidePurgeOfC(t: TestApp, s: Seeded, c: string, beside: () => Promise<void>) {
    let purged!: () => void;
    const ready = new Promise<void>((done) => (purged = done));
    const purging = write(t.deps.db.kysely, async (tx) => {
      await purge(operatorCtx(tx, s.workspaceId), { ids: [c] });
      purged();
      if (t.dialect === 'postgres') assert.ok(await someoneWaits(tx), 'the other write waits for the purge of C');
    });
    await ready;
    if (t.dialect !== 'postgres') await purging;
    const other = beside();
    await purging;
    await other;
  }

  test('a purge of A beside the purge of C alone waits for it, and renames the membership to D', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, d, list } = await chain(t, s);
    await merge(t, s, d, c);
    await besidePurgeOfC(t, s, c, () => trash(s, 'purge', [a]));
    assert.equal(await naming([a, c]), 0);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), [d]);
  });

  test('a restore of the list beside the purge of C alone waits for it, and brings back D', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { c, d, list } = await chain(t, s);
    await merge(t, s, d, c);
    await besidePurgeOfC(t, s, c, () => trash(s, 'restore', [list]));
    assert.deepEqual(await members(s, list), [d]);
  });

  test('a middle entry purged alone after its end: A keeps naming it, and its purge erases the membership', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, d, list } = await chain(t, s);
    await merge(t, s, d, c);
    await ok(s, 'DELETE', `/v1/contacts/${d}`);
    await trash(s, 'purge', [d]);
    await trash(s, 'purge', [c]);
    assert.equal((await listed(s)).get(a), c);
    await trash(s, 'purge', [a]);
    assert.equal(await naming([a, c, d]), 0);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), []);
  });

  test('a chain ending at a record purged with it: the membership is erased with that record', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, list } = await chain(t, s);
    await ok(s, 'DELETE', `/v1/contacts/${c}`);
    await trash(s, 'purge', [a, c]);
    assert.equal(await naming([a, c]), 0);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), []);
  });

  test('a chain ending at a record purged before: the purge of the duplicate erases the membership', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { a, c, list } = await chain(t, s);
    await ok(s, 'DELETE', `/v1/contacts/${c}`);
    await trash(s, 'purge', [c]);
    await trash(s, 'purge', [a]);
    assert.equal(await naming([a, c]), 0);
    await trash(s, 'restore', [list]);
    assert.deepEqual(await members(s, list), []);
  });
});
