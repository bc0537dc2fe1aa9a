// A CSV cell of a MULTI_SELECT field (docs/import.md §CSV): labels separated by `;`, compared
// without case, and an option whose label holds `;` itself is named by that label.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField, addOption } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

eachDialect('rolodex import of CSV multi-select cells', (ctx) => {
  test('an option whose label holds ";" is read whole; an unknown label is refused with the valid ones', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'kinds', label: 'Kinds', valueType: 'MULTI_SELECT' });
    const ids = new Map<string, string>();
    for (const label of ['R&D; Labs', 'R&D', 'Sales', 'Labs']) ids.set(label, (await addOption(op, { objectType: 'account', fieldKey: 'kinds', label })).id);
    const path = join(t.tdb.dataDir, 'kinds.csv');
    writeFileSync(path, 'externalId,Name,Kinds\na1,A,r&d; labs;sales\na2,B,Labs;R&D\na3,C,R&D;Labs;Sales\n');
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path, '--json']);
    assert.equal(r.code, 0, r.err);
    const imported = JSON.parse(r.out).ids.account as Record<string, string>;
    const kinds = async (ext: string) => (await call(t, s.secret, 'GET', `/v1/accounts/${imported[ext]}`)).json().fields.kinds.value;
    assert.deepEqual(await kinds('a1'), [ids.get('R&D; Labs'), ids.get('Sales')]);
    assert.deepEqual(await kinds('a2'), [ids.get('Labs'), ids.get('R&D')]);
    // Pieces join only into a label as it is written (but for case): "R&D;Labs" is two options.
    assert.deepEqual(await kinds('a3'), [ids.get('R&D'), ids.get('Labs'), ids.get('Sales')]);

    writeFileSync(path, 'externalId,Name,Kinds\na4,D,Sales;Ops\n');
    const bad = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^line 2: Kinds: "Ops" is not an option of Kinds; valid labels: R&D; Labs, R&D, Sales, Labs$/m);
  });
});
