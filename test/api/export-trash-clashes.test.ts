// `rolodex export --include-trash` (docs/import.md §Export): the trash keeps a record's externalId
// and unique values while another record takes them, and the import brings trashed records back
// live, so of the records holding one a live record keeps it, else the trashed record deleted last;
// the others come back under their server id, without the value, linked as they were.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { addField } from '../../src/definitions/service.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Entity = { id: string; externalId: string | null; fields: Record<string, { value: unknown }>; relationships: Record<string, { values: string[] }> };

const account = (externalId: string, name: string, code: string) =>
  JSON.stringify({ object: 'account', externalId, fields: { $name: { value: name, valueType: 'TEXT' }, code: { value: code, valueType: 'TEXT' } } });

eachDialect('rolodex export --include-trash of records whose externalId or unique value another record took', (ctx) => {
  test('the export imports into an empty workspace; the record that keeps each comes back with it, the others under their id', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, a.workspaceId);
    await addField(op, { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    const load = async (line: string) => (await runImport(op, { kinds: importKinds(), text: line })).ids.account as Record<string, string>;
    const del = async (id: string) => assert.equal((await call(t, a.secret, 'DELETE', `/v1/accounts/${id}`)).statusCode, 200);

    // a-1 trashed, then imported again: the live one holds its externalId and code.
    const old = (await load(account('a-1', 'Old Acme', 'C1')))['a-1'] as string;
    const ann = (
      await call(t, a.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: [old] } })
    ).json<Entity>();
    await del(old);
    await load(account('a-1', 'Acme', 'C1'));
    // x-1 trashed twice: both in the trash, the one deleted last keeps its externalId and code.
    const first = (await load(account('x-1', 'First X', 'X')))['x-1'] as string;
    await del(first);
    const second = (await load(account('x-1', 'Second X', 'X')))['x-1'] as string;
    await del(second);

    const file = join(t.tdb.dataDir, 'trash.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, '--include-trash', file]);
    assert.equal(ex.code, 0, ex.err);
    assert.match(ex.err, /^rolodex export: 2 values of unique fields left out of records in the trash: another record holds them/);
    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);

    const copies = (await call(t, b.secret, 'GET', '/v1/accounts?limit=25')).json().data as Entity[];
    const seen = copies
      .map((c) => [c.externalId, c.fields.$name?.value, c.fields.code?.value ?? null])
      .toSorted((x, y) => String(x[1]).localeCompare(String(y[1])));
    assert.deepEqual(seen, [
      ['a-1', 'Acme', 'C1'],
      [first, 'First X', null],
      [old, 'Old Acme', null],
      ['x-1', 'Second X', 'X'],
    ]);
    // The live contact's link to the trashed account names it as its own line does.
    const annCopy = (await call(t, b.secret, 'GET', `/v1/contacts/${JSON.parse(im.out).ids.contact[ann.id]}`)).json<Entity>();
    assert.deepEqual(annCopy.relationships.$account?.values, [copies.find((c) => c.externalId === old)?.id]);
  });
});
