// A list create's writes whose shape never changes are built and compiled once (docs/performance.md
// §Writes compiled once): the list's row, and its event with the event's deliveries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { compiledDuring } from '../helpers/compiles.ts';

eachDialect('list create compiles', (ctx) => {
  test('POST /v1/lists after the first: no insert into lists or events compiled again', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const create = (name: string) => call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: name, $objectType: 'account' } });
    {
      const r = await create('first');
      assert.equal(r.statusCode, 200, r.body);
    }
    const { result, compiled } = await compiledDuring(() => create('second'));
    assert.equal(result.statusCode, 200, result.body);
    assert.deepEqual(
      compiled.filter((q) => /insert into "(lists|events)"/.test(q)),
      [],
      compiled.join('\n'),
    );
  });
});
