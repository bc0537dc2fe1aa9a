// `rolodex import` of records of custom object types (docs/import.md §record), on both databases:
// values checked against the type's definitions, references in both directions by externalId,
// the value index and trigrams written so filters find imported records, re-import in place,
// and errors naming the line and the field.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { BULK_LOAD } from '../../src/records/import.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';

const ndjson = (objects: unknown[]) => objects.map((o) => JSON.stringify(o)).join('\n');

async function setUp(t: TestApp): Promise<{ workspaceId: string; secret: string }> {
  const seeded = await seedWorkspace(t);
  const ctx = operatorCtx(t.deps.db.kysely, seeded.workspaceId);
  await defineObjectType(ctx, { slug: 'project', label: 'Projects' });
  await defineObjectType(ctx, { slug: 'vendor', label: 'Vendors' });
  await addField(ctx, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
  await addField(ctx, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'USD' });
  await addField(ctx, { objectType: 'project', key: 'contact_email', label: 'Contact e-mail', valueType: 'EMAIL' });
  await addField(ctx, { objectType: 'vendor', key: 'name', label: 'Name', valueType: 'TEXT' });
  await addRelationship(ctx, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
  await addRelationship(ctx, { objectType: 'project', key: 'supplier', label: 'Supplier', cardinality: 'has_one', targetType: 'vendor' });
  await addRelationship(ctx, { objectType: 'account', key: 'flagship', label: 'Flagship', cardinality: 'has_one', targetType: 'project' });
  return { workspaceId: seeded.workspaceId, secret: seeded.secret };
}

const project = (externalId: string, name: string, budget: number, email: string, rels: Record<string, unknown> = {}) => ({
  object: 'record',
  objectType: 'project',
  externalId,
  fields: { name: { value: name, valueType: 'TEXT' }, budget: { value: budget, valueType: 'CURRENCY' }, contact_email: { value: email } },
  relationships: rels,
});

const FILE = [
  // The account first: it points at a project further down, which points back at it.
  {
    object: 'account',
    externalId: 'a1',
    fields: { $name: { value: 'Globex', valueType: 'TEXT' } },
    relationships: { flagship: { objectType: 'project', values: ['p1'] } },
  },
  project('p1', 'Volcano lair', 1_000_000, 'hank@globex.example', { client: { values: ['a1'] }, supplier: { objectType: 'vendor', values: ['p1'] } }),
  project('p2', 'Monorail', 250, 'lyle@springfield.example'),
  // The same externalId as a project: externalIds are unique per type.
  { object: 'record', objectType: 'vendor', externalId: 'p1', fields: { name: { value: 'Lanley & Co' } } },
];

async function failure(t: TestApp, workspaceId: string, objects: unknown[]): Promise<ImportFailed> {
  try {
    await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: ndjson(objects) });
  } catch (err) {
    if (err instanceof ImportFailed) return err;
    throw err;
  }
  assert.fail('the import should have failed');
}

eachDialect('import of custom-object records', (ctx) => {
  test('records of custom types import with their values and relationships, and filters find them', async () => {
    const t = ctx();
    const { workspaceId, secret } = await setUp(t);
    const out = await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: ndjson(FILE) });
    assert.deepEqual(out.counts, { account: 1, record: 3 });
    const p1 = out.ids.project?.p1 as string;
    const v1 = out.ids.vendor?.p1 as string;
    const a1 = out.ids.account?.a1 as string;
    assert.match(p1, /^rec_/);
    assert.match(v1, /^rec_/);
    const got = (await call(t, secret, 'GET', `/v1/objects/project/values/${p1}`)).json();
    assert.equal(got.externalId, 'p1');
    assert.deepEqual(got.fields.budget, { value: 1_000_000, valueType: 'CURRENCY' });
    assert.deepEqual(got.fields.contact_email, { value: 'hank@globex.example', valueType: 'EMAIL' });
    assert.deepEqual(got.relationships.client.values, [a1]);
    assert.deepEqual(got.relationships.supplier.values, [v1]);
    assert.deepEqual((await call(t, secret, 'GET', `/v1/accounts/${a1}`)).json().relationships.flagship.values, [p1]);
    const ids = async (query: string) => {
      const res = await call(t, secret, 'GET', `/v1/objects/project?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((r: { id: string }) => r.id);
    };
    assert.deepEqual(await ids('budget[greaterThan]=1000'), [p1]);
    assert.deepEqual(await ids('name=monorail'), [out.ids.project?.p2]);
    assert.deepEqual(await ids('contact_email[contains]=GLOBEX'), [p1]);
  });

  for (const vendors of [1, 3])
    test(`a bulk load of a custom type spans its chunks beside ${vendors} vendor(s), and every filter finds them`, async () => {
      const t = ctx();
      const { workspaceId, secret } = await setUp(t);
      const saved = [{ ...BULK_LOAD }, { ...IMPORT_CHUNK }] as const;
      // Five projects, read two at a time, are a bulk load spanning three chunks. Three vendors
      // between them are a second load of the same kind, begun while the first holds.
      Object.assign(BULK_LOAD, { min: 3, share: 0 });
      IMPORT_CHUNK.atomic = 2;
      const lines: unknown[] = Array.from({ length: 5 }, (_, i) => project(`p${i}`, `Project ${i}`, 10 * i, `owner${i}@globex.example`));
      for (let v = vendors - 1; v >= 0; v--)
        lines.splice(2 + v, 0, { object: 'record', objectType: 'vendor', externalId: `v${v}`, fields: { name: { value: `Lanley & Co ${v}` } } });
      let out;
      try {
        out = await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: ndjson(lines) });
      } finally {
        Object.assign(BULK_LOAD, saved[0]);
        Object.assign(IMPORT_CHUNK, saved[1]);
      }
      // A bulk load packs its postings: none of the projects has a posting row.
      const postings = async (ids: string[]) =>
        Number(
          (await sql<{ n: number }>`select count(*) as n from record_trigrams where record_id in (${sql.join(ids)})`.execute(t.deps.db.kysely)).rows[0]?.n,
        );
      assert.equal(await postings(Object.values(out.ids.project ?? {})), 0);
      const found = async (path: string) => {
        const res = await call(t, secret, 'GET', path);
        assert.equal(res.statusCode, 200, res.body);
        return { totalCount: res.json().totalCount, ids: (res.json().data as { id: string }[]).map((r) => r.id).sort() };
      };
      assert.deepEqual(await found('/v1/objects/project?contact_email[contains]=globex'), { totalCount: 5, ids: Object.values(out.ids.project ?? {}).sort() });
      assert.deepEqual(await found('/v1/objects/project?budget[greaterThan]=15'), {
        totalCount: 3,
        ids: ['p2', 'p3', 'p4'].map((p) => out.ids.project?.[p]).sort(),
      });
      assert.deepEqual(await found('/v1/objects/vendor?name[startsWith]=lanley'), { totalCount: vendors, ids: Object.values(out.ids.vendor ?? {}).sort() });
      assert.deepEqual(await found('/v1/objects/vendor?name=lanley %26 co 0'), { totalCount: 1, ids: [out.ids.vendor?.v0] });
    });

  test('importing again updates in place: same ids, values replaced, the index follows', async () => {
    const t = ctx();
    const { workspaceId, secret } = await setUp(t);
    const c = operatorCtx(t.deps.db.kysely, workspaceId);
    const first = await runImport(c, { kinds: importKinds(), text: ndjson(FILE) });
    const again = await runImport(c, { kinds: importKinds(), text: ndjson([project('p1', 'Volcano lair', 5, 'scorpio@globex.example')]) });
    assert.deepEqual(again.ids.project, { p1: first.ids.project?.p1 });
    const list = (await call(t, secret, 'GET', '/v1/objects/project')).json();
    assert.equal(list.totalCount, 2);
    const p1 = list.data.find((r: { id: string }) => r.id === first.ids.project?.p1);
    assert.deepEqual(p1.fields.budget.value, 5);
    assert.deepEqual(p1.relationships.client.values, []);
    assert.equal((await call(t, secret, 'GET', '/v1/objects/project?budget[greaterThan]=1000')).json().totalCount, 0);
    assert.equal((await call(t, secret, 'GET', '/v1/objects/project?contact_email[contains]=hank')).json().totalCount, 0);
    assert.equal((await call(t, secret, 'GET', '/v1/objects/project?contact_email[contains]=scorpio')).json().totalCount, 1);
  });

  test('errors name the line and field, and nothing is written', async () => {
    const t = ctx();
    const { workspaceId, secret } = await setUp(t);
    const cases: Array<[unknown[], RegExp]> = [
      [[{ ...project('p1', 'X', 1, 'a@b.example'), objectType: 'widget' }], /^line 1: objectType: no custom object type "widget"/],
      [[{ ...project('p1', 'X', 1, 'a@b.example'), objectType: 'account' }], /^line 1: objectType: "account" is not a custom object type/],
      [[{ object: 'record', externalId: 'x', fields: {} }], /^line 1: objectType: must be the slug/],
      [[project('p1', 'X', 'lots' as never, 'a@b.example')], /^line 1: fields\.budget\.value: /],
      [[project('p1', 'X', 1, 'not an address')], /^line 1: fields\.contact_email\.value: /],
      [[{ ...project('p1', 'X', 1, 'a@b.example'), fields: { colour: { value: 'red' } } }], /^line 1: fields\.colour: is not a field of project/],
      [[{ ...project('p1', 'X', 1, 'a@b.example'), fields: { $name: { value: 'red' } } }], /^line 1: fields\.\$name: is not a system field of project/],
      [
        [project('p1', 'X', 1, 'a@b.example', { client: { values: ['a-none'] } })],
        /^line 1: relationships\.client\.values\[0\]: no account with externalId "a-none"/,
      ],
      [[project('p1', 'X', 1, 'a@b.example'), project('p1', 'Y', 2, 'a@b.example')], /^line 2: externalId: "p1" appears twice for record project/],
    ];
    for (const [objects, message] of cases) {
      const err = await failure(t, workspaceId, objects);
      assert.match(err.message, message);
    }
    assert.equal((await call(t, secret, 'GET', '/v1/objects/project')).json().totalCount, 0);
  });

  test('a record already in the workspace is referenced by its externalId from a later import', async () => {
    const t = ctx();
    const { workspaceId, secret } = await setUp(t);
    const c = operatorCtx(t.deps.db.kysely, workspaceId);
    const first = await runImport(c, { kinds: importKinds(), text: ndjson([FILE[2]]) });
    const later = await runImport(c, {
      kinds: importKinds(),
      text: ndjson([{ object: 'account', externalId: 'a9', fields: { $name: { value: 'Springfield' } }, relationships: { flagship: { values: ['p2'] } } }]),
    });
    const acc = (await call(t, secret, 'GET', `/v1/accounts/${later.ids.account?.a9}`)).json();
    assert.deepEqual(acc.relationships.flagship.values, [first.ids.project?.p2]);
  });
});

eachDialect('docs/import.md examples', (ctx) => {
  test('the examples of docs/import.md import as they are', async () => {
    const t = ctx();
    const { workspaceId } = await setUp(t);
    const doc = readFileSync(new URL('../../docs/import.md', import.meta.url), 'utf8');
    const blocks = [...doc.matchAll(/```ndjson\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    const example = blocks.find((b) => b.includes('"externalId":"o-1"')) as string;
    const record = blocks.find((b) => b.includes('"object":"record"')) as string;
    const out = await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: `${example}\n${record}` });
    assert.deepEqual(out.counts, { user: 1, account: 1, contact: 1, opportunity: 1, record: 1 });
  });
});

eachDialect('import of custom object types', (ctx) => {
  test('one file defines a type, its fields and records; importing it again changes nothing', async () => {
    const t = ctx();
    const { workspaceId, secret } = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, workspaceId);
    const file = ndjson([
      { object: 'record', objectType: 'ticket', externalId: 't-1', fields: { title: { value: 'Broken' }, severity: { value: 'High' } } },
      {
        object: 'definition',
        externalId: 'd-sev',
        definition: 'field',
        objectType: 'ticket',
        key: 'severity',
        label: 'Severity',
        valueType: 'SINGLE_SELECT',
        options: ['Low', 'High'],
      },
      { object: 'definition', externalId: 'd-title', definition: 'field', objectType: 'ticket', key: 'title', label: 'Title', valueType: 'TEXT' },
      { object: 'definition', externalId: 'd-ticket', definition: 'type', slug: 'ticket', label: 'Tickets' },
    ]);
    const first = await runImport(c, { kinds: importKinds(), text: file });
    assert.equal(first.ids.definition?.['d-ticket'], 'ticket');
    const again = await runImport(c, { kinds: importKinds(), text: file });
    assert.deepEqual(again.ids.ticket, first.ids.ticket);
    const defs = (await call(t, secret, 'GET', '/v1/objects/ticket/definitions')).json();
    assert.deepEqual(Object.keys(defs.fieldDefinitions), ['severity', 'title']);
    const list = (await call(t, secret, 'GET', '/v1/objects/ticket?severity=High')).json();
    assert.equal(list.totalCount, 1);
    assert.deepEqual((await call(t, secret, 'GET', '/v1/objects')).json().data, [{ objectType: 'ticket', label: 'Tickets' }]);
    // Another label corrects the type in place, as a field's does; its records stay.
    const relabel = ndjson([{ object: 'definition', externalId: 'd', definition: 'type', slug: 'ticket', label: 'Issues' }]);
    assert.equal((await runImport(c, { kinds: importKinds(), text: relabel })).ids.definition?.d, 'ticket');
    assert.deepEqual((await call(t, secret, 'GET', '/v1/objects')).json().data, [{ objectType: 'ticket', label: 'Issues' }]);
    assert.equal((await call(t, secret, 'GET', '/v1/objects/ticket?severity=High')).json().totalCount, 1);
    const blank = await failure(t, workspaceId, [{ object: 'definition', externalId: 'd', definition: 'type', slug: 'ticket', label: ' ' }]);
    assert.match(blank.message, /^line 1: label: must be 1 to 255 characters/);
    const reserved = await failure(t, workspaceId, [{ object: 'definition', externalId: 'd', definition: 'type', slug: 'account', label: 'Accounts' }]);
    assert.match(reserved.message, /^line 1: slug: /);
  });
});
