// A CSV cell of a MULTI_SELECT field (docs/import.md §CSV): labels separated by `;`, compared
// without case, and an option whose label holds `;` itself is named by that label. A select label
// in a CSV cell or an NDJSON line names its option ignoring case and runs of white space, as a
// select filter does, alike in both formats (docs/import.md §Value types).
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

  test('a label with doubled or outer white space, or another case, names its option in CSV and NDJSON alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'phase', label: 'Phase', valueType: 'SINGLE_SELECT' });
    await addField(op, { objectType: 'account', key: 'areas', label: 'Areas', valueType: 'MULTI_SELECT' });
    const won = (await addOption(op, { objectType: 'account', fieldKey: 'phase', label: 'Closed won' })).id;
    const east = (await addOption(op, { objectType: 'account', fieldKey: 'areas', label: 'North East' })).id;
    const west = (await addOption(op, { objectType: 'account', fieldKey: 'areas', label: 'West' })).id;
    const csv = join(t.tdb.dataDir, 'phases.csv');
    writeFileSync(csv, 'externalId,Name,Phase,Areas\nc1,A,"Closed  won","north   east; WEST"\nc2,B,closed\twon,North East\n');
    const ndjson = join(t.tdb.dataDir, 'phases.ndjson');
    const line = (ext: string, phase: string, areas: string[]) =>
      JSON.stringify({
        object: 'account',
        externalId: ext,
        fields: { $name: { value: ext }, phase: { value: phase, valueType: 'SINGLE_SELECT' }, areas: { value: areas, valueType: 'MULTI_SELECT' } },
      });
    writeFileSync(ndjson, [line('n1', 'Closed  won', ['north   east', 'WEST']), line('n2', ' closed won ', ['North East'])].join('\n'));
    const ids: Record<string, string> = {};
    for (const args of [['--type', 'account', csv], [ndjson]]) {
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, ...args, '--json']);
      assert.equal(r.code, 0, r.err);
      Object.assign(ids, JSON.parse(r.out).ids.account);
    }
    const fields = async (ext: string) => (await call(t, s.secret, 'GET', `/v1/accounts/${ids[ext]}`)).json().fields;
    for (const ext of ['c1', 'n1']) assert.deepEqual([(await fields(ext)).phase.value, (await fields(ext)).areas.value], [won, [east, west]], ext);
    for (const ext of ['c2', 'n2']) assert.deepEqual([(await fields(ext)).phase.value, (await fields(ext)).areas.value], [won, [east]], ext);
    // One option named twice, by two spellings, is refused as the API refuses it.
    writeFileSync(ndjson, line('n3', 'Closed won', ['West', 'west ']));
    const twice = await rolodex(t, ['import', '--workspace', s.workspaceId, ndjson]);
    assert.equal(twice.code, 1);
    assert.match(twice.err, /line 1: fields\.areas\.value(\[1\])?: .*names the same option twice/);
    // A label that is not an option's but for white space inside a word is still refused.
    writeFileSync(csv, 'externalId,Name,Phase\nc3,C,Closedwon\n');
    const bad = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', csv]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /line 2: Phase: "Closedwon" is not an option of Phase; valid labels: Closed won/);
  });
});
