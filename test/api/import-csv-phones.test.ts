// A CSV cell of a multi-valued TELEPHONE field (docs/import.md §CSV): its numbers are separated by
// `;`, and the `;ext=N` of an extension, as the API stores and answers it, stays with its number.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

eachDialect('rolodex import of CSV telephone cells', (ctx) => {
  test('numbers with extensions written ;ext=N are read whole in a list of numbers', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'contact', key: 'phones', label: 'Phones', valueType: 'TELEPHONE', multipleValues: true });
    await addField(op, { objectType: 'contact', key: 'desk', label: 'Desk', valueType: 'TELEPHONE' });
    const path = join(t.tdb.dataDir, 'phones.csv');
    writeFileSync(
      path,
      'externalId,Name,Phones,Desk\n' +
        'c1,Ann Lee,+1 202 555 0123;ext=100; +49 30 1234567 ; +44 20 7946 0018 ;EXT=7,+49 30 1234567;ext=12\n' +
        'c2,Bo Ma,+49 30 1234567,\n',
    );
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', path, '--json']);
    assert.equal(r.code, 0, r.err);
    const ids = JSON.parse(r.out).ids.contact as Record<string, string>;
    const ann = (await call(t, s.secret, 'GET', `/v1/contacts/${ids.c1}`)).json();
    assert.deepEqual(ann.fields.phones.value, ['+12025550123;ext=100', '+49301234567', '+442079460018;ext=7']);
    assert.equal(ann.fields.desk.value, '+49301234567;ext=12');
    const bo = (await call(t, s.secret, 'GET', `/v1/contacts/${ids.c2}`)).json();
    assert.deepEqual(bo.fields.phones.value, ['+49301234567']);
  });
});
