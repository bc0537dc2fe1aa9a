// A history page whose values repeat reads its rows in a few statements (docs/history.md, the
// read in src/records/history.ts): each read takes twice the rows of the one before, so 20 entries
// that each stand for 10 identical rows (200 rows) take 4 reads of the field, not one per 22 rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

eachDialect('history reads', (ctx) => {
  test('a page of 20 entries over runs of 10 identical values: at most 4 reads of the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const created = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Runs', lastName: 'H' } } });
    assert.equal(created.statusCode, 200, created.body);
    const id = created.json().id as string;
    const rows = Array.from({ length: 400 }, (_, i) => ({
      record_id: id,
      field: '$profilePhotoUrl',
      seq: i + 1,
      workspace_id: s.workspaceId,
      value: JSON.stringify(`https://photo.test/${Math.ceil((i + 1) / 10)}`),
      recorded_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      is_create: 0,
    }));
    await t.deps.db.kysely.insertInto('field_history').values(rows).execute();
    const { result, statements } = await statementsOf(() => call(t, s.secret, 'GET', `/v1/contacts/${id}/fields/$profilePhotoUrl/history?limit=20`));
    assert.equal(result.statusCode, 200, result.body);
    const page = result.json();
    assert.deepEqual(
      page.data.map((e: { value: string }) => e.value),
      Array.from({ length: 20 }, (_, i) => `https://photo.test/${40 - i}`),
    );
    assert.equal(page.hasMore, true);
    const reads = statements.filter((x) => /from "field_history"/.test(x) && /"field" = /.test(x));
    assert.ok(reads.length <= 4, `${reads.length} reads of the field's rows:\n${reads.join('\n')}`);
  });
});
