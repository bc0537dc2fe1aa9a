// What a delete and a restore of a contact cost the database (docs/trash.md, docs/performance.md
// §Deletes beside creates): a delete moves the contact's relationship rows through the primary key
// and the inverse index, never a scan of entity_relationships, even once ANALYZE has seen one
// account held by every contact (SQLite then planned `source_id = ? or target_id = ?` as a scan);
// on PostgreSQL the statements nobody reads go out with the next one awaited, so a delete waits
// for 8 round trips and a restore in a write with follow-ups for 8 (13 and 12 before): its event
// carries the record as read back after the writes (docs/events.md §Types), its row with the
// writes' last round trip, its derived relationships in one of their own, then the event. The rows
// its entry holds are taken, and answered, by one statement a table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { stepsOf } from '../helpers/sql-spy.ts';

eachDialect('trash statements', (ctx) => {
  test('a delete and a restore of a contact linked to an account held by every contact', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: 'C', lastName: `${i}` } },
        relationships: { $account: [account] },
      });
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    const db = t.deps.db.kysely;
    await sql`analyze`.execute(db);
    // The first of each warms the caches (definitions, prepared statements).
    for (const id of ids.slice(0, 2)) assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: ids[0]! }), { followUpFailed: () => {} });
    const removed = await stepsOf(() => call(t, s.secret, 'DELETE', `/v1/contacts/${ids[2]}`));
    assert.equal(removed.result.statusCode, 200, removed.result.body);
    const back = await stepsOf(() => write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: ids[1]! }), { followUpFailed: () => {} }));
    assert.equal(back.result.links, 1);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${ids[1]}`)).json().relationships.$account.values, [account]);
    // The rows its entry holds are taken in one statement a table, which answers them (before: a
    // select, then a delete).
    const held = back.steps.flat().filter((x) => /\b(from|into) "?trash_(links|members)\b/.test(x));
    assert.equal(held.length, 2, JSON.stringify(held));
    for (const statement of held) assert.match(statement, /^delete from "trash_(links|members)" .* returning /, statement);
    if (t.dialect === 'sqlite') {
      // The statements that move the contact's rows (before: one select and one delete with `or`).
      const moving = removed.steps
        .flat()
        .filter((x) => /^(insert into trash_links|delete from "?entity_relationships|select \* from "entity_relationships")/.test(x));
      assert.ok(moving.length >= 2, JSON.stringify(moving));
      for (const statement of moving) {
        const details = await sqlitePlan(db, statement);
        assert.ok(!details.some((d) => /^SCAN (entity_relationships|[eir])\b/.test(d)), `${statement}: ${JSON.stringify(details)}`);
      }
    } else {
      const links = removed.steps.flat().filter((x) => /entity_relationships/.test(x) && /^(insert into trash_links|delete)/.test(x));
      assert.equal(links.length, 3, `the held rows copied in one statement, then deleted by source and by target: ${JSON.stringify(links)}`);
      assert.ok(removed.steps.length <= 8, `a delete waits for ${removed.steps.length} round trips: ${JSON.stringify(removed.steps)}`);
      assert.ok(back.steps.length <= 8, `a restore waits for ${back.steps.length} round trips: ${JSON.stringify(back.steps)}`);
    }
  });

  // The links others hold to a restored record come back after each holder's rows: their last
  // positions, and the holders' definitions, are read once for all of them, so a restore of an
  // account with many contacts, which holds them locked, costs a few statements, not a few a contact.
  test("a restore of an account reads its contacts' last positions and definitions once, not once a contact", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const contacts: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: 'C', lastName: `${i}` } },
        relationships: { $account: [account] },
      });
      assert.equal(r.statusCode, 200, r.body);
      contacts.push(r.json().id);
    }
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/accounts/${account}`)).statusCode, 200);
    const db = t.deps.db.kysely;
    const back = await stepsOf(() => write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: account }), { followUpFailed: () => {} }));
    assert.equal(back.result.links, 20);
    const statements = back.steps.flat();
    const positions = statements.filter((x) => /max\("?position"?\)/.test(x) && /entity_relationships/.test(x));
    assert.equal(positions.length, 1, JSON.stringify(positions));
    const versions = statements.filter((x) => /definition_versions/.test(x));
    assert.ok(versions.length <= 4, `definitions read ${versions.length} times: ${JSON.stringify(versions)}`);
    for (const id of contacts.slice(0, 3))
      assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${id}`)).json().relationships.$account.values, [account]);
  });
});
