// A page of records waits for as few answers from the database as it can (docs/pages.md §Round
// trips of a page): on PostgreSQL a member page and a contact page are two steps, where each
// step's statements go out together, and a member page reads its records, their definitions'
// version and their own relationship rows in one statement. The relationships are read alongside the records with the
// cached definitions; when those turn out stale (a definition added by another process), they are
// read again with the new ones, so a page never shows relationships by out-of-date definitions.
// A task page without a status (`$status[-equal]=TODO`) near the top waits for as many steps as
// one with a status.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { elsewhere, rolodex } from '../helpers/outside.ts';
import { stepsOf } from '../helpers/sql-spy.ts';

async function importFile(t: TestApp, workspaceId: string, line: object): Promise<void> {
  const file = join(t.tdb.dataDir, 'definitions.ndjson');
  writeFileSync(file, JSON.stringify(line) + '\n');
  await rolodex(t, 'import', '--workspace', workspaceId, file);
}

eachDialect('steps of a page', (ctx) => {
  test('member and contact pages: two steps on PostgreSQL, the same answer as before', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const contacts: string[] = [];
    for (const name of ['Ann', 'Bo', 'Cy']) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: name, lastName: 'Lee' } },
        relationships: { $account: account },
      });
      assert.equal(r.statusCode, 200, r.body);
      contacts.push(r.json().id as string);
    }
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: contacts } })
    ).json();
    for (const path of [`/v1/lists/${list.id}/contacts?limit=2&offset=1`, '/v1/contacts?limit=2&offset=1']) {
      const warm = await call(t, s.secret, 'GET', path);
      assert.equal(warm.statusCode, 200, warm.body);
      assert.equal(warm.json().data.length, 2);
      assert.deepEqual(warm.json().data[0].relationships.$account.values, [account]);
      const { result, steps } = await stepsOf(() => call(t, s.secret, 'GET', path));
      assert.deepEqual(result.json(), warm.json());
      // The key's lookup is not the page's: it comes back when the key's one-second cache has
      // expired, as it may on a loaded machine between the two calls.
      const page = steps.map((x) => x.filter((q) => !/from "api_keys"/.test(q))).filter((x) => x.length > 0);
      if (t.deps.db.dialect === 'postgres') assert.equal(page.length, 2, `${path}: ${page.map((x) => x.join(' | ')).join('\n')}`);
      if (path.startsWith('/v1/lists/')) {
        // A member page reads its records with the definitions' version and their own
        // relationship rows in one statement, on both databases.
        const all = page.flat();
        assert.equal(all.filter((q) => /from "records"/.test(q)).length, 1, all.join('\n'));
        assert.ok(!all.some((q) => /^select "version" from "definition_versions"/.test(q)), all.join('\n'));
        assert.ok(!all.some((q) => /^select "source_id", "name", "target_id" from "entity_relationships"/.test(q)), all.join('\n'));
      }
    }
    const foreign = await seedWorkspace(t);
    assert.equal((await call(t, foreign.secret, 'GET', `/v1/lists/${list.id}/contacts`)).statusCode, 404);
  });

  test('a task page without a status waits for as many steps as one with a status', async () => {
    // Near the top, the listing without a ranked value's set is one statement, as the value's own
    // set is (docs/pages.md §Differences of sets).
    const t = ctx();
    const s = await seedWorkspace(t);
    for (let i = 0; i < 12; i++) {
      const body = { fields: { $title: `T${i}`, $status: ['TODO', 'IN_PROGRESS', 'COMPLETE'][i % 3] }, relationships: { $assignedTo: s.userId } };
      assert.equal((await call(t, s.secret, 'POST', '/v1/tasks', body)).statusCode, 200);
    }
    const stepsFor = async (path: string) => {
      const warm = await call(t, s.secret, 'GET', path);
      assert.equal(warm.statusCode, 200, warm.body);
      const { result, steps } = await stepsOf(() => call(t, s.secret, 'GET', path));
      assert.deepEqual(result.json(), warm.json());
      return steps.map((x) => x.filter((q) => !/from "api_keys"/.test(q))).filter((x) => x.length > 0);
    };
    const positive = await stepsFor('/v1/tasks?$status=TODO&limit=2&offset=1');
    for (const offset of [0, 1, 6]) {
      const path = `/v1/tasks?$status[-equal]=TODO&limit=2&offset=${offset}`;
      const negated = await stepsFor(path);
      if (t.deps.db.dialect === 'postgres') assert.equal(negated.length, positive.length, `${path}: ${negated.map((x) => x.join(' | ')).join('\n')}`);
    }
  });

  test('a relationship defined and filled by another process shows on the next page', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const contact = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: 'Lee' } } })).json().id as string;
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [contact] } })
    ).json();
    const page = async () => (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json().data[0];
    assert.equal((await page()).relationships.partner, undefined); // the definitions are cached now

    await importFile(t, s.workspaceId, {
      object: 'definition',
      externalId: 'd-partner',
      definition: 'relationship',
      objectType: 'contact',
      key: 'partner',
      label: 'Partner',
      cardinality: 'has_one',
      targetType: 'account',
    });
    await elsewhere(
      t,
      `insert into entity_relationships (source_id, name, object_type, target_id, position) values ('${contact}', 'partner', 'account', '${account}', 0)`,
    );
    assert.deepEqual((await page()).relationships.partner, { cardinality: 'has_one', objectType: 'account', values: [account] });
  });
});
