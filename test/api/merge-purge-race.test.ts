// A purge of a merged duplicate whose id another entry still holds (docs/trash.md §Purge,
// docs/merge.md §Links). The merge renames the rows and memberships held in the trash for its
// duplicate, then locks the duplicate's lists: on PostgreSQL a list deleted while the merge waits
// there keeps the duplicate's membership under its entry, which the renames have passed. The
// purge of the duplicate (named, by age, or by the sweeper) renames it to the primary, one
// membership for one member, so the list's restore brings back the primary. SQLite has one writer
// at a time: the merge runs after the list delete's COMMIT and renames the membership itself, so
// only the PostgreSQL half builds the held duplicate's id (checked before the purge).
// A note's link is never left under the duplicate's id: the merge writes the note's row (its link
// now names the primary), so a note deleted while the merge runs waits for it and then takes the
// link to the primary; the duplicate's purge leaves that link.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Tx, write } from '../../src/db/index.ts';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { mergeRecords } from '../../src/merges/service.ts';
import { RECORD_TYPES } from '../../src/records/resource.ts';
import { trashList } from '../../src/trash/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

const DAY = 86_400_000;

eachDialect('a purge of a merged duplicate beside the trash', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function trash(s: Seeded, sub: 'purge' | 'restore', args: string[]) {
    const r = await rolodex(ctx(), ['trash', sub, '--workspace', s.workspaceId, ...args]);
    assert.equal(r.code, 0, r.err);
  }
  const contact = async (s: Seeded, n: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).id as string;
  const members = async (s: Seeded, list: string) => (await ok(s, 'GET', `/v1/lists/${list}/contacts`)).data.map((r: { id: string }) => r.id);
  /** The members a list's entry holds, as stored. */
  const heldBy = async (list: string) =>
    (await ctx().deps.db.kysely.selectFrom('trash_members').select('entity_id').where('trash_id', '=', list).execute()).map((m) => m.entity_id).sort();

  /**
   * Runs `first` in a transaction that commits once `second`, started after it, waits for it (on
   * PostgreSQL; on SQLite `second` waits for the one writer and runs after the COMMIT).
   */
  async function beside<T>(t: TestApp, first: (tx: Tx) => Promise<unknown>, second: () => Promise<T>): Promise<T> {
    let ran!: () => void;
    const ready = new Promise<void>((done) => (ran = done));
    const running = write(t.deps.db.kysely, async (tx) => {
      await first(tx);
      ran();
      if (t.dialect === 'postgres') assert.ok(await someoneWaits(tx), 'the second write waits for the first');
    });
    await ready;
    const sent = second();
    await running;
    return sent;
  }

  /** The merge happens ten days back, so that a purge by age takes the duplicate and not the lists. */
  const mergeBack = (t: TestApp, s: Seeded, primaryId: string, duplicateId: string) =>
    write(t.deps.db.kysely, (tx) =>
      mergeRecords(operatorCtx(tx, s.workspaceId, { now: Date.now() - 10 * DAY }), RECORD_TYPES.contact, { primaryId, duplicateId }),
    );
  const purges: [string, (t: TestApp, s: Seeded, duplicate: string) => Promise<void>][] = [
    ['rolodex trash purge naming it', (_t, s, duplicate) => trash(s, 'purge', [duplicate])],
    ['rolodex trash purge --older-than', (_t, s) => trash(s, 'purge', ['--older-than', '5d'])],
    [
      'the sweeper',
      async (t) => {
        await sweepOnce({ db: t.deps.db.kysely, now: Date.now(), files: filesEnv(t.config, t.deps.blobs) }, { trashRetentionDays: 5 });
      },
    ],
  ];
  for (const [by, purge] of purges)
    test(`${by}: lists deleted while the merge runs bring back the primary once`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const [primary, duplicate] = [await contact(s, 'P'), await contact(s, 'D')];
      const list = async (name: string, held: string[]) =>
        (await ok(s, 'POST', '/v1/lists', { fields: { $name: name, $objectType: 'contact' }, relationships: { $contacts: held } })).id as string;
      const [one, both] = [await list('One', [duplicate]), await list('Both', [primary, duplicate])];
      await beside(
        t,
        async (tx) => {
          for (const id of [one, both]) await trashList(operatorCtx(tx, s.workspaceId), { id });
        },
        () => mergeBack(t, s, primary, duplicate),
      );
      // The state the purge meets: on PostgreSQL the entries hold the duplicate's membership.
      if (t.dialect === 'postgres') {
        assert.deepEqual(await heldBy(one), [duplicate]);
        assert.deepEqual(await heldBy(both), [primary, duplicate].sort());
      }
      await purge(t, s, duplicate);
      assert.equal((await call(t, s.secret, 'GET', `/v1/contacts/${duplicate}`)).statusCode, 404);
      assert.deepEqual(await heldBy(one), [primary]);
      assert.deepEqual(await heldBy(both), [primary]);
      await trash(s, 'restore', [one, both]);
      assert.deepEqual(await members(s, one), [primary]);
      assert.deepEqual(await members(s, both), [primary]);
    });

  test('a note deleted while the merge runs takes its link to the primary, which the purge of the duplicate leaves', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [primary, duplicate] = [await contact(s, 'P'), await contact(s, 'D')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [duplicate] } })).id as string;
    const deleted = await beside(
      t,
      (tx) => mergeRecords(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { primaryId: primary, duplicateId: duplicate }),
      () => call(t, s.secret, 'DELETE', `/v1/notes/${note}`),
    );
    assert.equal(deleted.statusCode, 200, deleted.body);
    // The delete answers the note as it stood once the merge committed.
    assert.deepEqual(deleted.json().relationships.$contact.values, [primary]);
    await trash(s, 'purge', [duplicate]);
    await trash(s, 'restore', [note]);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values, [primary]);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${primary}`)).relationships.$note.values, [note]);
  });
});
