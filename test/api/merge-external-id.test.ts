// A merge and the records' externalIds (docs/merge.md §externalId) on both databases: a primary
// without one takes the duplicate's, so that an import naming it afterwards updates the primary
// instead of creating the duplicate again; the change is in the `<type>.merged` event's `changes`
// as the API shows it (`externalId`), in no field's history and not in `fieldWriteCount`. A
// primary with its own keeps it, and the duplicate's is released: an import naming it creates a
// new record, since the merged duplicate never comes back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { addField } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { write } from '../../src/db/write.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

type Entity = { id: string; externalId: string | null; updatedAt: string; fields: Record<string, { value: unknown }> };

const accountLine = (externalId: string, name: string) =>
  JSON.stringify({ object: 'account', externalId, fields: { $name: { value: name, valueType: 'TEXT' } } });

eachDialect('merge and externalId', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const load = async (s: Seeded, text: string) => (await runImport(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { kinds: importKinds(), text })).ids;
  const mergedEvent = async (s: Seeded, type: string) =>
    (await ctx().deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).execute())
      .map((r) => JSON.parse(r.body) as { type: string; data: { object: Entity; changes: Record<string, unknown> } })
      .find((e) => e.type === type);

  test('a primary without an externalId takes the duplicate’s; an import naming it then updates the primary', async () => {
    const s = await seedWorkspace(ctx());
    const p = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const d = (await load(s, accountLine('crm-7', 'Acme Inc'))).account?.['crm-7'] as string;
    const out = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: p.id, duplicateId: d });
    assert.equal(out.primary.externalId, 'crm-7');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${p.id}`)).externalId, 'crm-7');
    assert.equal(out.summary.fieldWriteCount, 0, 'externalId is not a field; $name kept the primary’s value');
    const event = await mergedEvent(s, 'account.merged');
    assert.deepEqual(event?.data.changes, { externalId: { from: null, to: 'crm-7' } });
    assert.equal(event?.data.object.externalId, 'crm-7');
    const history = await ok(s, 'GET', `/v1/accounts/${p.id}/fields/$name/history`);
    assert.deepEqual(
      (history.data as { value: unknown }[]).map((e) => e.value),
      ['Acme'],
    );

    const again = await load(s, accountLine('crm-7', 'Acme Renamed'));
    assert.equal(again.account?.['crm-7'], p.id, 'the import finds the primary by the externalId');
    const listed = await ok(s, 'GET', '/v1/accounts');
    assert.deepEqual(
      (listed.data as Entity[]).map((a) => [a.id, a.externalId, a.fields.$name?.value]),
      [[p.id, 'crm-7', 'Acme Renamed']],
    );
  });

  test('a primary with its own externalId keeps it; the duplicate’s is released', async () => {
    const s = await seedWorkspace(ctx());
    const ids = (await load(s, [accountLine('p-1', 'Primary'), accountLine('d-1', 'Duplicate')].join('\n'))).account ?? {};
    const [p, d] = [ids['p-1'] as string, ids['d-1'] as string];
    const out = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: p, duplicateId: d });
    assert.equal(out.primary.externalId, 'p-1');
    assert.equal((await mergedEvent(s, 'account.merged'))?.data.changes.externalId, undefined);
    const back = (await load(s, accountLine('d-1', 'Duplicate again'))).account?.['d-1'];
    assert.ok(back !== p && back !== d, 'the released externalId names a new record');
    await assert.rejects(
      write(ctx().deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: d })),
      /merged into/,
    );
  });

  test('a record of a custom type takes it too, when the merge changes nothing else', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    const line = (name: string) =>
      JSON.stringify({ object: 'record', objectType: 'project', externalId: 'x-1', fields: { name: { value: name, valueType: 'TEXT' } } });
    const p = await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'Lair' } });
    const d = (await load(s, line('Lair'))).project?.['x-1'] as string;
    const out = await ok(s, 'POST', '/v1/objects/project/merge', { primaryId: p.id, duplicateId: d });
    assert.equal(out.primary.externalId, 'x-1');
    assert.ok(out.primary.updatedAt > p.updatedAt, 'the primary changed: its updatedAt moves');
    assert.deepEqual((await mergedEvent(s, 'project.merged'))?.data.changes, { externalId: { from: null, to: 'x-1' } });
    assert.equal((await load(s, line('Volcano lair'))).project?.['x-1'], p.id);
    const got = await ok(s, 'GET', `/v1/objects/project/values/${p.id}`);
    assert.deepEqual([got.externalId, got.fields.name?.value], ['x-1', 'Volcano lair']);
  });
});
