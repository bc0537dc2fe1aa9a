// What `rolodex export --include-trash` asks the database about a trashed record's externalId
// (docs/import.md §Export): whether a live record holds it is asked once for the whole export, a
// chunk of externalIds at a time, not each time a line names the record: a trashed account that
// 1,100 live contacts link to (three pages of lines) costs one such statement, not one per page
// of contacts plus one for its own line.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const CONTACTS = 1100;

eachDialect('export --include-trash: the externalIds of trashed records', (ctx) => {
  test('one statement asks whether live records hold them, however many links name them', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    const lines = [JSON.stringify({ object: 'account', externalId: 'a-1', fields: { $name: { value: 'Acme', valueType: 'TEXT' } } })];
    for (let i = 0; i < CONTACTS; i++)
      lines.push(
        JSON.stringify({
          object: 'contact',
          externalId: `c-${i}`,
          fields: { $name: { value: { firstName: 'C', lastName: `${i}` }, valueType: 'FULL_NAME' } },
          relationships: { $account: { objectType: 'account', values: ['a-1'] } },
        }),
      );
    const account = (await runImport(op, { kinds: importKinds(), text: lines.join('\n') })).ids.account?.['a-1'] as string;
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/accounts/${account}`)).statusCode, 200);

    const file = join(t.tdb.dataDir, 'names.ndjson');
    const { result, statements } = await statementsOf(() => rolodex(t, ['export', '--workspace', s.workspaceId, '--include-trash', file]));
    assert.equal(result.code, 0, result.err);
    const asked = statements.filter((x) => /from "records" where .*"external_id" (=|in) /.test(x));
    assert.equal(asked.length, 1, JSON.stringify(asked));

    // Every contact's line and the account's own line name the account alike.
    const written = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string; externalId: string; relationships?: Record<string, { values: string[] }> });
    const contacts = written.filter((l) => l.object === 'contact');
    assert.equal(contacts.length, CONTACTS);
    assert.ok(contacts.every((c) => c.relationships?.$account?.values.join() === 'a-1'));
    assert.deepEqual(
      written.filter((l) => l.object === 'account').map((l) => l.externalId),
      ['a-1'],
    );
  });
});
