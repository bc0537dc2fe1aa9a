// Definitions as data (docs/records.md §Definitions) on both databases: the system catalogue is
// present in every workspace with ids of its own, stable across reads; operators' custom fields,
// options and relationships join it; and the e-mail lookup of the value index folds case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField, addOption, addRelationship, loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { InputError } from '../../src/lib/errors.ts';
import { foldText } from '../../src/lib/fold.ts';
import { contactIdsByEmails } from '../../src/records/index/repository.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { write } from '../../src/db/write.ts';

eachDialect('definitions', (ctx) => {
  test('system definitions: every workspace has them, with ids of its own that do not change', async () => {
    const t = ctx();
    const a = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    const b = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    const a1 = (await loadDefinitions(a, { objectType: 'opportunity' }))!;
    const a2 = (await loadDefinitions(a, { objectType: 'opportunity' }))!;
    const b1 = (await loadDefinitions(b, { objectType: 'opportunity' }))!;
    assert.deepEqual([...a1.fields.keys()], ['$name', '$stage', '$opportunityStatus']);
    const stage = a1.fields.get('$stage')!;
    assert.equal(stage.valueType, 'SINGLE_SELECT');
    assert.ok(stage.options!.length > 0);
    assert.match(stage.id, /^fld_[0-9a-z]{26}$/);
    assert.match(stage.options![0]!.id, /^opt_[0-9a-z]{26}$/);
    assert.deepEqual(a2.fields.get('$stage'), stage);
    assert.notEqual(b1.fields.get('$stage')!.id, stage.id);
    assert.notEqual(b1.fields.get('$stage')!.options![0]!.id, stage.options![0]!.id);
    assert.equal(a1.relationships.get('$account')!.required, true);
    assert.equal(await loadDefinitions(a, { objectType: 'widget' }), null);
  });

  test('custom fields, options and relationships join the catalogue of their workspace only', async () => {
    const t = ctx();
    const a = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    const b = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    await addField(a, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    const gold = await addOption(a, { objectType: 'account', fieldKey: 'tier', label: 'Gold' });
    const extra = await addOption(a, { objectType: 'opportunity', fieldKey: '$stage', label: 'On hold' });
    await addRelationship(a, { objectType: 'contact', key: 'referrer', label: 'Referrer', cardinality: 'has_one', targetType: 'contact' });
    const acc = (await loadDefinitions(a, { objectType: 'account' }))!;
    assert.deepEqual(acc.fields.get('tier')!.options, [gold]);
    assert.equal(acc.fields.get('tier')!.system, false);
    const opp = (await loadDefinitions(a, { objectType: 'opportunity' }))!;
    assert.deepEqual(opp.fields.get('$stage')!.options!.at(-1), extra);
    assert.equal((await loadDefinitions(a, { objectType: 'contact' }))!.relationships.get('referrer')!.objectType, 'contact');
    assert.equal((await loadDefinitions(b, { objectType: 'account' }))!.fields.has('tier'), false);
    await assert.rejects(addField(a, { objectType: 'account', key: 'tier', label: 'Again', valueType: 'TEXT' }), (e: InputError) => e.param === 'key');
    await assert.rejects(addField(a, { objectType: 'account', key: '$tier', label: 'System', valueType: 'TEXT' }), (e: InputError) => e.param === 'key');
    await assert.rejects(addField(a, { objectType: 'account', key: 'n', label: 'N', valueType: 'NUMBER', multipleValues: true }), InputError);
    await assert.rejects(addOption(a, { objectType: 'account', fieldKey: 'tier', label: 'Gold' }), (e: InputError) => e.param === 'label');
    await assert.rejects(addOption(a, { objectType: 'account', fieldKey: '$name', label: 'X' }), (e: InputError) => e.param === 'field');
  });

  test('contacts by e-mail through the value index, ignoring case', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    const row = (id: string, email: string) => ({
      workspace_id: ws,
      object_type: 'contact',
      field: '$email',
      value_text: foldText(email),
      value_num: null,
      record_id: id,
    });
    await t.deps.db.kysely
      .insertInto('record_values')
      .values([row('con_1', 'Ann@Acme.test'), row('con_2', 'ann@acme.TEST'), row('con_3', 'bo@acme.test')])
      .execute();
    const found = await contactIdsByEmails(t.deps.db.kysely, ws, ['ANN@acme.test', 'nobody@acme.test']);
    assert.deepEqual([...found.entries()], [['ann@acme.test', ['con_1', 'con_2']]]);
    assert.equal((await contactIdsByEmails(t.deps.db.kysely, 'ws_other', ['ann@acme.test'])).size, 0);
  });
});

eachDialect('definition order', (ctx) => {
  test('definitions created at the same instant list in the order they were created, through the API too', async () => {
    const t = ctx();
    const { workspaceId, secret } = await seedWorkspace(t);
    // One clock for all: before positions, the ids' random part decided the order among them.
    const keys = Array.from({ length: 24 }, (_, i) => `f${(i * 7) % 24}_${i}`);
    await write(t.deps.db.kysely, async (tx) => {
      const c = operatorCtx(tx, workspaceId, { now: Date.parse('2026-05-01T00:00:00Z') });
      for (const k of keys) await addField(c, { objectType: 'account', key: k, label: k.toUpperCase(), valueType: 'TEXT' });
      for (const k of keys) await addRelationship(c, { objectType: 'account', key: `r${k}`, label: k, cardinality: 'has_many', targetType: 'contact' });
    });
    const defs = (await loadDefinitions(operatorCtx(t.deps.db.kysely, workspaceId), { objectType: 'account' }))!;
    assert.deepEqual(
      [...defs.fields.keys()].filter((k) => !k.startsWith('$')),
      keys,
    );
    assert.deepEqual(
      [...defs.relationships.keys()].filter((k) => !k.startsWith('$')),
      keys.map((k) => `r${k}`),
    );
    const res = await call(t, secret, 'GET', '/v1/accounts/definitions');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(
      Object.keys(body.fieldDefinitions).filter((k) => !k.startsWith('$')),
      keys,
    );
    assert.deepEqual(
      Object.keys(body.relationshipDefinitions).filter((k) => !k.startsWith('$')),
      keys.map((k) => `r${k}`),
    );
  });
});
