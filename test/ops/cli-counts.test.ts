// The operator CLI's lines for people count as English does, on both databases: one of a thing
// is singular (`1 member`, `with 1 link`, `purged 1 record: … 1 relationship`, `exported 1
// record`), as the import's summary already says it (countOf, src/cli/io.ts).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex as cli } from '../helpers/cli.ts';

/** The counts of a purge line (`purged 1 record: 2 field values, …`) that are one thing written in the plural. */
const pluralOnes = (line: string) =>
  line
    .replace(/^purged /, '')
    .split(/: |, /)
    .filter((count) => count.startsWith('1 ') && count.endsWith('s'));

eachDialect('CLI counts', (ctx) => {
  test('channel, trash restore and trash purge say one member, link and record in the singular', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const created = await cli(t, [
      'channel',
      'create',
      '--workspace',
      s.workspaceId,
      '--provider',
      'slack',
      '--name',
      'ops',
      '--visibility',
      'public',
      '--json',
    ]);
    assert.equal(created.code, 0, created.err);
    const added = await cli(t, ['channel', 'add-members', '--workspace', s.workspaceId, (JSON.parse(created.out) as { id: string }).id, s.userId]);
    assert.equal(added.code, 0, added.err);
    assert.match(added.out, / {2}1 member, 0 messages$/);

    const post = async (url: string, body: unknown) => {
      const res = await call(t, s.secret, 'POST', url, body);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ id: string }>();
    };
    const account = await post('/v1/accounts', { fields: { $name: 'Acme' } });
    const kept = await post('/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: account.id } });
    const erased = await post('/v1/contacts', { fields: { $name: { firstName: 'Bob' } }, relationships: { $account: account.id } });
    for (const id of [kept.id, erased.id]) assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);

    const restored = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, kept.id]);
    assert.equal(restored.code, 0, restored.err);
    assert.equal(restored.out, `restored contact ${kept.id} with 1 link`);
    // A list is restored with its members, counted as such.
    const list = await post('/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [kept.id] } });
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/lists/${list.id}`)).statusCode, 200);
    const listBack = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, list.id]);
    assert.equal(listBack.out, `restored list ${list.id} with 1 member`);

    const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, erased.id]);
    assert.equal(purged.code, 0, purged.err);
    assert.match(purged.out, /^purged 1 record: /);
    assert.match(purged.out, /, 1 relationship,/);
    assert.deepEqual(pluralOnes(purged.out), [], purged.out);

    const file = join(t.tdb.dataDir, 'accounts.ndjson');
    const exported = await cli(t, ['export', '--workspace', s.workspaceId, '--types', 'account', file]);
    assert.equal(exported.code, 0, exported.err);
    assert.equal(exported.err, `exported 1 record to ${file}`);
  });
});
