// `rolodex export` (docs/import.md §Export): a workspace built through the API, exported and
// imported into an empty workspace, reads the same through the API (ids differ: records are
// compared by externalId, or the original's id that the export names them by).
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { addField, addOption, addRelationship } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Entity = { id: string; externalId: string | null; fields: Record<string, { value: unknown }>; relationships: Record<string, { values: string[] }> };

/** Option id → label of every select field of a type, read through the API. */
async function optionLabels(t: TestApp, s: Seeded, plural: string): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  const res = await call(t, s.secret, 'GET', `/v1/${plural}/definitions`);
  if (res.statusCode !== 200) return labels;
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.id === 'string' && typeof o.label === 'string') labels.set(o.id, o.label);
      Object.values(o).forEach(walk);
    }
  };
  walk(res.json());
  return labels;
}

/** What an entity holds, with ids replaced by names (`name`) and option ids by labels. */
function normalized(e: Entity, name: (id: string) => string, labels: Map<string, string>) {
  const fields: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(e.fields)) {
    const v = f.value;
    fields[k] = Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? (labels.get(x) ?? x) : x)) : typeof v === 'string' ? (labels.get(v) ?? v) : v;
  }
  const relationships: Record<string, string[]> = {};
  for (const [k, r] of Object.entries(e.relationships)) relationships[k] = r.values.map(name).toSorted();
  return { fields, relationships };
}

eachDialect('rolodex export', (ctx) => {
  test('export, then import into an empty workspace, reproduces every record, definition and link', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, a.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    await addField(op, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'EUR' });
    await addRelationship(op, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
    // Two fields archived once their values are written: hidden, their values kept (docs/records.md §Correcting definitions).
    await addField(op, { objectType: 'account', key: 'old', label: 'Old', valueType: 'TEXT' });
    await addField(op, { objectType: 'account', key: 'grade', label: 'Grade', valueType: 'SINGLE_SELECT' });
    await addOption(op, { objectType: 'account', fieldKey: 'grade', label: 'A' });
    const tier = {
      object: 'definition',
      externalId: 'd',
      definition: 'field',
      objectType: 'account',
      key: 'tier',
      label: 'Tier',
      valueType: 'SINGLE_SELECT',
      options: ['Gold', 'Silver'],
    };
    const hold = { object: 'definition', externalId: 'o', definition: 'option', objectType: 'opportunity', field: '$stage', label: 'On hold' };
    const imported = { object: 'contact', externalId: 'c-ext', fields: { $name: { value: { firstName: 'Cy' }, valueType: 'FULL_NAME' } }, relationships: {} };
    await runImport(op, { kinds: importKinds(), text: [tier, hold, imported].map((o) => JSON.stringify(o)).join('\n') });

    const ok = async (method: 'GET' | 'POST', url: string, body?: unknown): Promise<Entity> => {
      const r = await call(t, a.secret, method, url, body);
      assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      return r.json<Entity>();
    };
    const acme = await ok('POST', '/v1/accounts', {
      fields: { $name: 'Acme', tier: 'Gold', $website: ['https://acme.test'], $primaryAddress: { city: 'Berlin', country: 'DE' } },
    });
    const beta = await ok('POST', '/v1/accounts', { fields: { $name: 'Beta', old: 'keep me', grade: 'A' }, relationships: { $owner: a.userId } });
    for (const key of ['old', 'grade'])
      assert.equal((await rolodex(t, ['definition', 'archive', '--workspace', a.workspaceId, '--type', 'account', '--key', key])).code, 0);
    const ann = await ok('POST', '/v1/contacts', {
      fields: { $name: { firstName: 'Ann', lastName: 'Lee' }, $email: ['ann@acme.test'] },
      relationships: { $account: [acme.id, beta.id] },
    });
    const deal = await ok('POST', '/v1/opportunities', {
      fields: { $name: 'Deal', $stage: 'On hold' },
      relationships: { $account: acme.id, $champion: ann.id, $owner: a.userId },
    });
    const note = await ok('POST', '/v1/notes', { fields: { $title: 'Call', $content: '# Notes' }, relationships: { $account: acme.id } });
    const task = await ok('POST', '/v1/tasks', {
      fields: { $title: 'Follow up', $status: 'TODO' },
      relationships: { $assignedTo: a.userId, $account: acme.id },
    });
    const apollo = await ok('POST', '/v1/objects/project/values', { fields: { name: 'Apollo', budget: 1200 }, relationships: { client: acme.id } });
    const cy = (await call(t, a.secret, 'GET', '/v1/contacts?limit=25')).json().data.find((c: Entity) => c.externalId === 'c-ext') as Entity;

    const file = join(t.tdb.dataDir, 'export.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string });
    const firstOther = lines.findIndex((l) => l.object !== 'definition');
    assert.ok(firstOther > 0 && lines.slice(firstOther).every((l) => l.object !== 'definition'), 'definitions come first');
    assert.equal(lines[firstOther]?.object, 'user', 'then users');
    const oldLine = lines.find((l) => (l as { key?: string }).key === 'old');
    assert.deepEqual(oldLine, {
      object: 'definition',
      externalId: 'field:account:old',
      definition: 'field',
      objectType: 'account',
      key: 'old',
      label: 'Old',
      valueType: 'TEXT',
      archived: true,
    });
    const betaLine = lines.find((l) => (l as { externalId?: string }).externalId === beta.id) as unknown as { fields: object; archivedFields?: object };
    assert.deepEqual(betaLine.archivedFields, { old: { value: 'keep me', valueType: 'TEXT' }, grade: { value: 'A', valueType: 'SINGLE_SELECT' } });
    assert.ok(!('old' in betaLine.fields));

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const ids = JSON.parse(im.out).ids as Record<string, Record<string, string>>;
    assert.deepEqual(JSON.parse(im.out).counts, { definition: 8, user: 1, account: 2, contact: 2, opportunity: 1, note: 1, task: 1, record: 1 });

    // The names the export gives: an externalId, else the original's id.
    const copyName = new Map<string, string>();
    for (const byExt of Object.values(ids)) for (const [ext, id] of Object.entries(byExt)) copyName.set(id, ext);
    const origName = (id: string) => (id === cy.id ? 'c-ext' : id);
    const cases: [string, string, Entity][] = [
      ['accounts', 'account', acme],
      ['accounts', 'account', beta],
      ['contacts', 'contact', ann],
      ['contacts', 'contact', cy],
      ['opportunities', 'opportunity', deal],
      ['notes', 'note', note],
      ['tasks', 'task', task],
      ['objects/project/values', 'project', apollo],
    ];
    for (const [plural, object, orig] of cases) {
      const name = orig.externalId ?? orig.id;
      const copyId = ids[object]?.[name];
      assert.ok(copyId, `${object} ${name} was imported`);
      const copy = (await call(t, b.secret, 'GET', `/v1/${plural}/${copyId}`)).json<Entity>();
      const [la, lb] = [await optionLabels(t, a, plural), await optionLabels(t, b, plural)];
      const fresh = (await call(t, a.secret, 'GET', `/v1/${plural}/${orig.id}`)).json<Entity>();
      assert.deepEqual(
        normalized(copy, (id) => copyName.get(id) ?? `?${id}`, lb),
        normalized(fresh, origName, la),
        `${object} ${name}`,
      );
      assert.equal(copy.externalId, name);
    }
    const tiers = await optionLabels(t, b, 'accounts');
    assert.equal(tiers.get((await call(t, b.secret, 'GET', `/v1/accounts/${ids.account?.[acme.id]}`)).json().fields.tier.value), 'Gold');

    // The archived fields came archived: hidden from definitions and records, their values kept,
    // and brought back by unarchive as in the original.
    const shown = Object.keys((await call(t, b.secret, 'GET', '/v1/accounts/definitions')).json().fieldDefinitions);
    assert.ok(!shown.includes('old') && !shown.includes('grade'), shown.join());
    const betaCopy = `/v1/accounts/${ids.account?.[beta.id]}`;
    assert.ok(!('old' in (await call(t, b.secret, 'GET', betaCopy)).json().fields));
    const again = await rolodex(t, ['import', '--workspace', b.workspaceId, file]);
    assert.equal(again.code, 0, `imported again, the archived definitions match: ${again.err}`);
    for (const [s, key] of [a, b].flatMap((w) => ['old', 'grade'].map((k) => [w, k] as const)))
      assert.equal((await rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'account', '--key', key])).code, 0);
    const back = (await call(t, b.secret, 'GET', betaCopy)).json<Entity>();
    assert.equal(back.fields.old?.value, 'keep me');
    const unarchived = await rolodex(t, ['import', '--workspace', b.workspaceId, file]);
    assert.equal(unarchived.code, 1);
    assert.match(unarchived.err, /archived: field "old" of account exists with archived false, not true/);
    assert.deepEqual(
      normalized(back, (id) => copyName.get(id) ?? `?${id}`, await optionLabels(t, b, 'accounts')),
      normalized((await call(t, a.secret, 'GET', `/v1/accounts/${beta.id}`)).json<Entity>(), origName, await optionLabels(t, a, 'accounts')),
    );

    // --types narrows the records; definitions and users always come.
    const only = await rolodex(t, ['export', '--workspace', a.workspaceId, '--types', 'contact', '--include-trash', file]);
    assert.equal(only.code, 0, only.err);
    const kinds = new Set(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { object: string }).object),
    );
    assert.deepEqual([...kinds].toSorted(), ['contact', 'definition', 'user']);
  });

  test('an address or name an older release stored with no member that is not blank is left out, so the export imports', async () => {
    const t = ctx();
    const [a, b] = [await seedWorkspace(t), await seedWorkspace(t)];
    const acc = (await call(t, a.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $primaryAddress: { city: 'Berlin' } } })).json();
    const con = (await call(t, a.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } })).json();
    // As an older release stored them, before a write refused them (docs/records.md §Writing fields).
    const db = t.deps.db.kysely;
    for (const [id, key, value] of [
      [acc.id, '$primaryAddress', { city: '', street: ' ' }],
      [con.id, '$name', {}],
    ] as const) {
      const row = await db.selectFrom('records').select('fields').where('id', '=', id).executeTakeFirstOrThrow();
      await db
        .updateTable('records')
        .set({ fields: JSON.stringify({ ...JSON.parse(row.fields), [key]: value }) })
        .where('id', '=', id)
        .execute();
    }
    const file = join(t.tdb.dataDir, 'blank.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string; fields?: Record<string, unknown> });
    assert.ok(!('$primaryAddress' in lines.find((l) => l.object === 'account')!.fields!));
    assert.ok(!('$name' in lines.find((l) => l.object === 'contact')!.fields!));
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file]);
    assert.equal(im.code, 0, im.err);
    const [copy] = (await call(t, b.secret, 'GET', '/v1/accounts')).json().data;
    assert.deepEqual([copy.fields.$name.value, copy.fields.$primaryAddress.value], ['Acme', null]);
  });

  test('archivedFields hold values of archived custom fields only, checked as fields are, kept hidden', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'live', label: 'Live', valueType: 'TEXT' });
    await addField(op, { objectType: 'account', key: 'gone', label: 'Gone', valueType: 'NUMBER', archived: true });
    const line = (extra: object) => JSON.stringify({ object: 'account', externalId: 'a', fields: { $name: { value: 'A', valueType: 'TEXT' } }, ...extra });
    const refused = async (text: string) => {
      const err = await runImport(op, { kinds: importKinds(), text }).then(
        () => assert.fail('the import should have failed'),
        (e: unknown) => e as Error,
      );
      return err.message;
    };
    assert.match(await refused(line({ archivedFields: { live: { value: 'x' } } })), /archivedFields\.live: is not an archived field of account/);
    assert.match(
      await refused(line({ fields: { gone: { value: 1 } } })),
      /fields\.gone: is not a field of account; it is archived, and its values go under archivedFields/,
    );
    assert.match(await refused(line({ archivedFields: { gone: { value: 'x', valueType: 'NUMBER' } } })), /archivedFields\.gone\.value: /);
    assert.match(await refused(line({ archivedFields: { $name: { value: 'x' } } })), /archivedFields\.\$name: is a system field/);
    const ids = (await runImport(op, { kinds: importKinds(), text: line({ archivedFields: { gone: { value: 3, valueType: 'NUMBER' } } }) })).ids;
    const url = `/v1/accounts/${ids.account?.a}`;
    assert.ok(!('gone' in (await call(t, s.secret, 'GET', url)).json().fields));
    assert.equal((await rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'account', '--key', 'gone'])).code, 0);
    assert.equal((await call(t, s.secret, 'GET', url)).json().fields.gone.value, 3);
  });

  test('--include-trash writes the records in the trash, the links and memberships the trash holds; without it they are left out', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const post = async (url: string, body: unknown): Promise<Entity> => (await call(t, a.secret, 'POST', url, body)).json<Entity>();
    const acme = await post('/v1/accounts', { fields: { $name: 'Acme' } });
    const beta = await post('/v1/accounts', { fields: { $name: 'Beta' } });
    const ann = await post('/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: [acme.id, beta.id] } });
    const bo = await post('/v1/contacts', { fields: { $name: { firstName: 'Bo' } }, relationships: { $account: [beta.id] } });
    await post('/v1/lists', { fields: { $name: 'Both', $objectType: 'contact' }, relationships: { $contacts: [ann.id, bo.id] } });
    assert.equal((await call(t, a.secret, 'DELETE', `/v1/contacts/${ann.id}`)).statusCode, 200);
    assert.equal((await call(t, a.secret, 'DELETE', `/v1/accounts/${beta.id}`)).statusCode, 200);

    type RecordLine = { object: string; externalId: string; relationships: Record<string, { values: string[] }>; members?: string[] };
    const exported = async (...flags: string[]): Promise<Map<string, RecordLine>> => {
      const file = join(t.tdb.dataDir, `export${flags.join('')}.ndjson`);
      const r = await rolodex(t, ['export', '--workspace', a.workspaceId, ...flags, file]);
      assert.equal(r.code, 0, r.err);
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as RecordLine)
        .filter((l) => l.object === 'account' || l.object === 'contact' || l.object === 'list');
      return new Map(lines.map((l) => [l.externalId, l]));
    };
    const live = await exported();
    const listId = [...live.values()].find((l) => l.object === 'list')?.externalId as string;
    assert.deepEqual([...live.keys()].toSorted(), [acme.id, bo.id, listId].toSorted());
    assert.deepEqual(live.get(bo.id)?.relationships, {});
    assert.deepEqual(live.get(listId)?.members, [bo.id]);

    const all = await exported('--include-trash');
    assert.deepEqual([...all.keys()].toSorted(), [acme.id, beta.id, ann.id, bo.id, listId].toSorted());
    assert.deepEqual(all.get(listId)?.members?.toSorted(), [ann.id, bo.id].toSorted());
    assert.deepEqual(all.get(ann.id)?.relationships.$account?.values.toSorted(), [acme.id, beta.id].toSorted());
    assert.deepEqual(all.get(bo.id)?.relationships.$account?.values, [beta.id]);

    // Imported, the records that were in the trash are live, linked as they were before their delete.
    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, join(t.tdb.dataDir, 'export--include-trash.ndjson'), '--json']);
    assert.equal(im.code, 0, im.err);
    const ids = JSON.parse(im.out).ids as Record<string, Record<string, string>>;
    const copy = (object: string, id: string) => ids[object]?.[id] as string;
    const annCopy = (await call(t, b.secret, 'GET', `/v1/contacts/${copy('contact', ann.id)}`)).json<Entity>();
    assert.deepEqual(annCopy.relationships.$account?.values.toSorted(), [copy('account', acme.id), copy('account', beta.id)].toSorted());
    const boCopy = (await call(t, b.secret, 'GET', `/v1/contacts/${copy('contact', bo.id)}`)).json<Entity>();
    assert.deepEqual(boCopy.relationships.$account?.values, [copy('account', beta.id)]);
    const members = (await call(t, b.secret, 'GET', `/v1/lists/${copy('list', listId)}/contacts`)).json().data as Entity[];
    assert.deepEqual(members.map((m) => m.id).toSorted(), [copy('contact', ann.id), copy('contact', bo.id)].toSorted());
  });

  test('a failed export leaves FILE as it was; a FILE that cannot be written is one plain error', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const file = join(t.tdb.dataDir, 'kept.ndjson');
    writeFileSync(file, 'what was there\n');
    // A type the workspace lacks only the database can judge: refused (1), not wrong usage (2),
    // whichever place it has in the list (docs/cli.md §The operator CLI).
    for (const types of ['nope', 'account,nope']) {
      const unknown = await rolodex(t, ['export', '--workspace', s.workspaceId, '--types', types, file]);
      assert.equal(unknown.code, 1, unknown.err);
      assert.match(unknown.err, new RegExp(`^rolodex export: --types: "nope" is not a type of workspace ${s.workspaceId} \\(account, contact, `));
      assert.doesNotMatch(unknown.err, /usage:/);
    }
    // An empty --types would export no record at all: wrong usage, not an export without records.
    for (const types of ['', ' , ']) {
      const empty = await rolodex(t, ['export', '--workspace', s.workspaceId, '--types', types, file]);
      assert.equal(empty.code, 2, empty.err);
      assert.match(empty.err, /--types names at least one type/);
    }
    const missing = await rolodex(t, ['export', '--workspace', 'ws_missing', file]);
    assert.equal(missing.code, 1, missing.err);
    assert.equal(readFileSync(file, 'utf8'), 'what was there\n');
    assert.deepEqual(
      readdirSync(t.tdb.dataDir).filter((n) => n.includes('kept.ndjson')),
      ['kept.ndjson'],
    );

    const nowhere = await rolodex(t, ['export', '--workspace', s.workspaceId, join(t.tdb.dataDir, 'no', 'such', 'dir', 'x.ndjson')]);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.err, /^rolodex export: cannot write .*x\.ndjson: the directory .*dir does not exist$/);
    // A FILE that is a directory: one line, the directory as it was, no partial file left.
    mkdirSync(join(t.tdb.dataDir, 'a-dir'));
    const dir = await rolodex(t, ['export', '--workspace', s.workspaceId, join(t.tdb.dataDir, 'a-dir')]);
    assert.equal(dir.code, 1);
    assert.equal(dir.err, `rolodex export: cannot write ${join(t.tdb.dataDir, 'a-dir')}: it is a directory`);
    assert.deepEqual(readdirSync(join(t.tdb.dataDir, 'a-dir')), []);
    assert.deepEqual(
      readdirSync(t.tdb.dataDir).filter((n) => n.includes('a-dir')),
      ['a-dir'],
    );

    const done = await rolodex(t, ['export', '--workspace', s.workspaceId, file]);
    assert.equal(done.code, 0, done.err);
    assert.match(readFileSync(file, 'utf8'), /^\{"object":"user"/m);
  });
});
