// What GET /v1/<plural>/{id} reads (docs/performance.md §Record reads and writes), on both
// databases: the record, its workspace's definitions version and its own relationship rows come
// from one statement (test/helpers/sql-spy.ts records every statement of the request), and the
// relationship values keep their order; on PostgreSQL the contact's meetings go out in the same
// step. A record of another workspace stays not found.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { statementsOf, stepsOf } from '../helpers/sql-spy.ts';

eachDialect('retrieve of a record', (ctx) => {
  test('one statement reads the record with its own relationships, in their order', async () => {
    const t = ctx();
    const w = await seedWorkspace(t);
    const accounts: string[] = [];
    for (const name of ['Zeta', 'Alpha', 'Mu']) {
      const res = await call(t, w.secret, 'POST', '/v1/accounts', { fields: { $name: name } });
      assert.equal(res.statusCode, 200, res.body);
      accounts.push(res.json().id as string);
    }
    const created = await call(t, w.secret, 'POST', '/v1/contacts', {
      fields: { $name: { firstName: 'Ada', lastName: 'Byron' }, $email: ['ada@example.test'] },
      relationships: { $account: accounts },
    });
    assert.equal(created.statusCode, 200, created.body);
    const id = created.json().id as string;
    await call(t, w.secret, 'GET', `/v1/contacts/${id}`); // warm the definitions cache

    const { result, statements } = await statementsOf(() => call(t, w.secret, 'GET', `/v1/contacts/${id}`));
    assert.equal(result.statusCode, 200, result.body);
    assert.deepEqual(result.json().relationships.$account.values, accounts);
    assert.deepEqual(result.json(), created.json());
    // Its own rows come with the record; the inverse ones (the notes naming the contact in their
    // `$contact`) are read by target, alongside, in the same step.
    const relationshipReads = statements.filter((s) => /entity_relationships/.test(s) && !/"r"\."target_id" in/.test(s));
    assert.equal(relationshipReads.length, 1, relationshipReads.join('\n'));
    assert.match(relationshipReads[0] ?? '', /from "records"/);

    // With the definitions cached, the contact's meetings (a derived relationship) are read in
    // the same step as the record: one round trip on PostgreSQL.
    const { steps } = await stepsOf(() => call(t, w.secret, 'GET', `/v1/contacts/${id}`));
    const mine = steps.map((x) => x.filter((q) => !/from "api_keys"/.test(q))).filter((x) => x.length > 0);
    if (t.deps.db.dialect === 'postgres') assert.equal(mine.length, 1, mine.map((x) => x.join(' | ')).join('\n'));

    const other = await seedWorkspace(t);
    const foreign = await call(t, other.secret, 'GET', `/v1/contacts/${id}`);
    assert.equal(foreign.statusCode, 404, foreign.body);
  });
});
