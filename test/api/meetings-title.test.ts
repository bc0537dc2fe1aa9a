// A meeting's `$title` is required text (docs/meetings.md §Writes): as a record's required text
// (docs/records.md §Writing fields), white space alone is refused, by the API and by the import,
// and a title with text is kept as written, spaces included.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { meetingBody } from '../helpers/meetings.ts';

eachDialect('meeting titles', (ctx) => {
  test('a title of white space alone is 400 invalid_value, as a record name is; one with text is kept as written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const $title of [' ', '   ', '\t\n', '\u00a0\u3000']) {
      const r = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $title }));
      assert.equal(r.statusCode, 400, `${JSON.stringify($title)}: ${r.body}`);
      assert.deepEqual([r.json().error.code, r.json().error.param], ['invalid_value', 'fields.$title'], r.body);
      const account = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: $title } });
      assert.deepEqual([account.statusCode, account.json().error.code], [400, 'invalid_value'], 'a record name is refused alike');
    }
    const listed = await call(t, s.secret, 'GET', '/v1/meetings');
    assert.equal(listed.json().totalCount, 0, 'nothing was stored');

    const kept = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $title: '  Weekly sync ' }));
    assert.equal(kept.statusCode, 200, kept.body);
    assert.equal(kept.json().fields.$title.value, '  Weekly sync ');
  });

  test('an import line whose title is white space alone is refused, naming the line and the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const line = (externalId: string, title: string) => ({
      object: 'meeting',
      externalId,
      fields: { $title: { value: title }, $startDate: { value: '2025-01-10T09:00:00Z' }, $endDate: { value: '2025-01-10T09:30:00Z' } },
    });
    const path = join(t.tdb.dataDir, `meetings-${process.pid}.ndjson`);
    writeFileSync(path, [line('m-ok', 'Kick-off'), line('m-blank', '   ')].map((o) => JSON.stringify(o)).join('\n'));
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--commit', 'atomic', path, '--json']);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /^line 2: fields\.\$title\.value: is required/m);
    const listed = await call(t, s.secret, 'GET', '/v1/meetings');
    assert.equal(listed.json().totalCount, 0, 'the atomic import wrote nothing');
  });
});
