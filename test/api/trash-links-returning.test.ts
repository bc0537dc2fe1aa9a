// Links that come back to a record while it is in the trash (docs/trash.md §Restore): the restore
// of an end puts a row the trashed record holds to it under that record's entry. The record may
// have linked other records in that relationship since the row left, at the same positions. Its
// restore brings each link back once, those it held when it was deleted first, the ones that came
// back to its entry after them in the order they came, and a has_one keeps the one it held. Two
// restores that put rows under one entry at once are settled by the record's restore. On both
// databases; SQLite has one writer at a time, so there the second restore runs after the first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

eachDialect('links that come back to a record in the trash', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const restoreAs = (s: Seeded, id: string) =>
    write(ctx().deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }), { followUpFailed: () => {} });
  const contact = async (s: Seeded, name: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: name } } })).id as string;
  /** Rows that must be gone once every record is back: held rows of the restored entries. */
  const held = async (ids: string[]) => (await ctx().deps.db.kysely.selectFrom('trash_links').select('trash_id').where('trash_id', 'in', ids).execute()).length;

  test('a has_many: the links it held come back first, then the one that came back to its entry', async () => {
    const s = await seedWorkspace(ctx());
    const [c1, c2] = [await contact(s, 'One'), await contact(s, 'Two')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $contact: [c1] } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${c1}`);
    // The note's rows of $contact start again at the first position.
    await ok(s, 'POST', `/v1/notes/${note}`, { relationships: { $contact: { add: [c2] } } });
    await ok(s, 'DELETE', `/v1/notes/${note}`);
    await restoreAs(s, c1);
    await restoreAs(s, note);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values, [c2, c1]);
    for (const c of [c1, c2]) assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${c}`)).relationships.$note.values, [note]);
    assert.equal(await held([note, c1]), 0);
  });

  test('a has_one: the link it held when deleted wins over the one that came back', async () => {
    const s = await seedWorkspace(ctx());
    const account = (await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).id as string;
    const [c1, c2] = [await contact(s, 'One'), await contact(s, 'Two')];
    const opp = (await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: account, $champion: c1 } }))
      .id as string;
    await ok(s, 'DELETE', `/v1/contacts/${c1}`);
    await ok(s, 'POST', `/v1/opportunities/${opp}`, { relationships: { $champion: { replace: c2 } } });
    await ok(s, 'DELETE', `/v1/opportunities/${opp}`);
    await restoreAs(s, c1);
    await restoreAs(s, opp);
    const back = await ok(s, 'GET', `/v1/opportunities/${opp}`);
    assert.deepEqual(back.relationships.$champion.values, [c2]);
    assert.deepEqual(back.relationships.$account.values, [account]);
    assert.equal(await held([opp, c1]), 0);
  });

  test('several come back in turn: each after the ones before it', async () => {
    const s = await seedWorkspace(ctx());
    const [c1, c2, c3] = [await contact(s, 'One'), await contact(s, 'Two'), await contact(s, 'Three')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $contact: [c1, c2] } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${c1}`);
    await ok(s, 'DELETE', `/v1/contacts/${c2}`);
    await ok(s, 'POST', `/v1/notes/${note}`, { relationships: { $contact: { add: [c3] } } });
    await ok(s, 'DELETE', `/v1/notes/${note}`);
    await restoreAs(s, c2);
    await restoreAs(s, c1);
    await restoreAs(s, note);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values, [c3, c2, c1]);
  });

  test('two restores putting rows under one entry at once: the record comes back with each link once', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [c1, c2, c3] = [await contact(s, 'One'), await contact(s, 'Two'), await contact(s, 'Three')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $contact: [c1, c2] } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${c1}`);
    await ok(s, 'DELETE', `/v1/contacts/${c2}`);
    await ok(s, 'POST', `/v1/notes/${note}`, { relationships: { $contact: { add: [c3] } } });
    await ok(s, 'DELETE', `/v1/notes/${note}`);
    // The restore of c1 stays open until the restore of c2 has run (on PostgreSQL it takes no lock
    // the first holds, so it commits first) or waits for it.
    let beside: Promise<unknown> | undefined;
    await write(
      t.deps.db.kysely,
      async (tx) => {
        await restore(operatorCtx(tx, s.workspaceId), { id: c1 });
        beside = restoreAs(s, c2);
        beside.catch(() => {});
        if (t.dialect === 'postgres') await Promise.race([beside, someoneWaits(tx)]);
      },
      { followUpFailed: () => {} },
    );
    await beside;
    await restoreAs(s, note);
    const values = (await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values as string[];
    assert.equal(values[0], c3);
    assert.deepEqual([...values].sort(), [c1, c2, c3].sort());
    for (const c of [c1, c2, c3]) assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${c}`)).relationships.$note.values, [note]);
    assert.equal(await held([note, c1, c2]), 0);
  });
});
