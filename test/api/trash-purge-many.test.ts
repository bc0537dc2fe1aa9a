// A purge of many entries at once erases what purging them one at a time erases (docs/trash.md
// §Purge), on both databases: the events and stored answers that name any of the records (one that
// names two is erased and counted once), the held links and memberships, the field history; what
// names a look-alike of an id, or only records left alone, stays. And the sweeper's batches purge
// the due entries of several workspaces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { filesEnv } from '../../src/files/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex as cli } from '../helpers/cli.ts';

eachDialect('trash purge of many entries', (ctx) => {
  async function ok(t: TestApp, s: Seeded, method: 'POST' | 'DELETE', url: string, body?: unknown, key?: string) {
    const res = await call(t, s.secret, method, url, body, key ? { 'idempotency-key': key } : {});
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json<{ id: string }>();
  }

  /**
   * A workspace whose account and two of its contacts are in the trash, named by events and stored
   * answers of their own and of records left alone: a contact linked to the account, a list of a
   * trashed contact and a kept one, an account named with a look-alike of a trashed contact's id.
   */
  async function scene(t: TestApp) {
    const s = await seedWorkspace(t);
    const acc = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } }, 'acc');
    const contacts: { id: string }[] = [];
    for (const name of ['a', 'b', 'kept'])
      contacts.push(await ok(t, s, 'POST', '/v1/contacts', { fields: { $name: { firstName: name } }, relationships: { $account: acc.id } }, name));
    const [c1, c2, c3] = contacts as [{ id: string }, { id: string }, { id: string }];
    await ok(t, s, 'POST', `/v1/contacts/${c1.id}`, { fields: { $name: { firstName: 'a2' } } }, 'a-update');
    await ok(t, s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [c1.id, c3.id] } }, 'list');
    await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: c1.id.toUpperCase() } }, 'look-alike');
    for (const id of [c1.id, c2.id, acc.id]) await ok(t, s, 'DELETE', `/v1/${id === acc.id ? 'accounts' : 'contacts'}/${id}`);
    await ok(t, s, 'POST', `/v1/contacts/${c3.id}`, { fields: { $name: { firstName: 'kept2' } } }, 'kept-update');
    return { s, purged: [acc.id, c1.id, c2.id], names: new Map([acc.id, c1.id, c2.id, c3.id].map((id, i) => [id, ['acc', 'a', 'b', 'kept'][i]!])) };
  }

  /** What the workspace still holds: events (type, and the object by its name in the scene) and stored answers' states. */
  async function left(t: TestApp, s: Seeded, names: Map<string, string>) {
    const db = t.deps.db.kysely;
    const events = await db.selectFrom('events').select(['type', 'object_id', 'body']).where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
    const keys = await db.selectFrom('idempotency_keys').select(['key', 'state']).where('workspace_id', '=', s.workspaceId).orderBy('key').execute();
    const history = await db.selectFrom('field_history').select('record_id').where('workspace_id', '=', s.workspaceId).execute();
    const links = await db.selectFrom('trash_links').select('trash_id').execute();
    return {
      events: events.map((e) => `${e.type} ${names.get(e.object_id) ?? (e.type.startsWith('list') ? 'list' : 'other')}`),
      bodies: events.map((e) => e.body),
      keys: keys.map((k) => `${k.key} ${k.state}`),
      history: history.map((h) => names.get(h.record_id) ?? 'other').sort(),
      links: links.filter((l) => names.has(l.trash_id)).length,
    };
  }

  test('purging several entries at once erases what purging them one at a time erases, counted alike', async () => {
    const t = ctx();
    const together = await scene(t);
    const apart = await scene(t);
    const all = await cli(t, ['trash', 'purge', '--workspace', together.s.workspaceId, ...together.purged, '--json']);
    assert.equal(all.code, 0, all.err);
    const sums: Record<string, number> = {};
    for (const id of apart.purged) {
      const one = await cli(t, ['trash', 'purge', '--workspace', apart.s.workspaceId, id, '--json']);
      assert.equal(one.code, 0, one.err);
      for (const [k, v] of Object.entries(JSON.parse(one.out) as Record<string, number>)) sums[k] = (sums[k] ?? 0) + v;
    }
    const counts = JSON.parse(all.out) as Record<string, number>;
    assert.deepEqual(counts, sums);
    // The answers of the creates of acc, a, b and kept (which links to acc), and of a's update.
    assert.deepEqual([counts.records, counts.storedResponses, counts.relationships, counts.listMemberships], [3, 5, 3, 1]);
    const after = await left(t, together.s, together.names);
    assert.deepEqual(await left(t, apart.s, apart.names).then(({ bodies: _, ...rest }) => rest), (({ bodies: _, ...rest }) => rest)(after));
    // Kept: the list's create (its body holds no members), the look-alike account's create, kept's
    // update since the account left (no link to it in its body); every event that named acc, a or
    // b is gone, each counted once.
    assert.deepEqual(after.events, ['list.created list', 'account.created other', 'contact.updated kept']);
    // The creates of acc, a, b and kept, a's update, the list's members_added and members_removed
    // of a, the deletes of a, b and acc.
    assert.equal(counts.events, 10, JSON.stringify(counts));
    for (const body of after.bodies) for (const id of together.purged) assert.ok(!body.includes(id), `${id} in ${body}`);
    assert.deepEqual(after.keys, ['a erased', 'a-update erased', 'acc erased', 'b erased', 'kept erased', 'kept-update done', 'list done', 'look-alike done']);
    assert.deepEqual(after.history, ['kept', 'kept', 'other']);
    assert.equal(after.links, 0);
  });

  test("the sweeper purges the due entries of several workspaces, each workspace's in batches", async () => {
    const t = ctx();
    const trashed: string[] = [];
    const seeded: Seeded[] = [];
    for (const n of [3, 2]) {
      const s = await seedWorkspace(t);
      seeded.push(s);
      for (let i = 0; i < n; i++) {
        const a = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: `A${i}` } }, `k${i}`);
        await ok(t, s, 'DELETE', `/v1/accounts/${a.id}`);
        trashed.push(a.id);
      }
    }
    const swept = await sweepOnce(
      { db: t.deps.db.kysely, now: Date.now() + 31 * 86_400_000, files: filesEnv(t.config, t.deps.blobs) },
      { trashRetentionDays: 30 },
    );
    // Other tests of this database may have trash of their own, as old.
    assert.ok(swept.trashPurged >= 5, JSON.stringify(swept));
    for (const s of seeded) {
      const listed = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--json']);
      assert.deepEqual(JSON.parse(listed.out), []);
    }
    const events = await t.deps.db.kysely.selectFrom('events').select('object_id').where('object_id', 'in', trashed).execute();
    assert.deepEqual(events, []);
  });
});
