// Lists through `rolodex import` and `rolodex export` (docs/import.md §`list`, §Export): the
// import kind creates, renames and re-fills lists by externalId, with the API's events; an export
// writes every list with its members, and its import into an empty workspace lists the same.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Entity = { id: string; externalId: string | null; fields: Record<string, { value: unknown }> };

function file(t: TestApp, name: string, objects: object[]): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, objects.map((o) => JSON.stringify(o)).join('\n'));
  return path;
}

const contact = (externalId: string) => ({ object: 'contact', externalId, fields: { $name: { value: { firstName: externalId }, valueType: 'FULL_NAME' } } });
const account = (externalId: string) => ({ object: 'account', externalId, fields: { $name: { value: externalId, valueType: 'TEXT' } } });

/** Every list of the workspace as [name, objectType, member externalIds sorted], newest first. */
async function lists(t: TestApp, s: Seeded): Promise<[unknown, unknown, (string | null)[]][]> {
  const out: [unknown, unknown, (string | null)[]][] = [];
  for (const l of (await call(t, s.secret, 'GET', '/v1/lists?limit=25')).json().data as Entity[]) {
    const type = l.fields.$objectType?.value as string;
    const plural = { account: 'accounts', contact: 'contacts', opportunity: 'opportunities' }[type];
    const members = (await call(t, s.secret, 'GET', `/v1/lists/${l.id}/${plural}?limit=25`)).json().data as Entity[];
    out.push([l.fields.$name?.value, type, members.map((m) => m.externalId).toSorted()]);
  }
  return out;
}

eachDialect('lists through import and export', (ctx) => {
  test('the list kind creates, renames and re-fills a list by externalId, with the events of the API', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const first = [
      { object: 'list', externalId: 'l-hot', name: ' Hot leads ', objectType: 'contact', members: ['c1', 'c2', 'c1'] },
      contact('c1'),
      contact('c2'),
      contact('c3'),
      account('a1'),
      { object: 'list', externalId: 'l-acc', name: 'Targets', objectType: 'account', members: ['a1'] },
    ];
    const r1 = await rolodex(t, ['import', '--workspace', ws, file(t, 'one.ndjson', first), '--json']);
    assert.equal(r1.code, 0, r1.err);
    assert.deepEqual(JSON.parse(r1.out).counts, { list: 2, contact: 3, account: 1 });
    assert.deepEqual(await lists(t, s), [
      ['Targets', 'account', ['a1']],
      ['Hot leads', 'contact', ['c1', 'c2']],
    ]);

    const again = [{ object: 'list', externalId: 'l-hot', name: 'Warm leads', objectType: 'contact', members: ['c3', 'c2'] }];
    const r2 = await rolodex(t, ['import', '--workspace', ws, file(t, 'two.ndjson', again), '--json']);
    assert.equal(r2.code, 0, r2.err);
    assert.equal(JSON.parse(r2.out).ids.list['l-hot'], JSON.parse(r1.out).ids.list['l-hot']);
    const [, hot] = await lists(t, s);
    assert.deepEqual(hot, ['Warm leads', 'contact', ['c2', 'c3']]);

    const events = await t.deps.db.kysely
      .selectFrom('events')
      .select('type')
      .where('workspace_id', '=', ws)
      .where('type', 'like', 'list.%')
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['list.created', 'list.created', 'list.members_added', 'list.members_added', 'list.updated', 'list.members_added', 'list.members_removed'],
    );
  });

  test('bad list lines are reported with their line and field; an atomic import then writes nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal(
      (
        await rolodex(t, [
          'import',
          '--workspace',
          ws,
          file(t, 'base.ndjson', [contact('c1'), { object: 'list', externalId: 'l', name: 'L', objectType: 'contact' }]),
        ])
      ).code,
      0,
    );
    const shapes = [
      { object: 'list', externalId: 'x1', name: '  ', objectType: 'contact' },
      { object: 'list', externalId: 'x2', name: 'X', objectType: 'note' },
      { object: 'list', externalId: 'x3', name: 'X', objectType: 'contact', members: 'c1' },
      { object: 'list', externalId: 'x4', name: 'X', objectType: 'contact', members: [''] },
      { object: 'list', externalId: 'x5', name: 'X', objectType: 'contact', $objectType: 'contact' },
    ];
    const bad = await rolodex(t, ['import', '--workspace', ws, file(t, 'shapes.ndjson', shapes)]);
    assert.equal(bad.code, 1);
    assert.deepEqual(
      bad.err
        .split('\n')
        .filter((l) => /^line \d+:/.test(l))
        .map((l) => /^line (\d+): ([^:]+):/.exec(l)?.slice(1, 3).join(' ')),
      ['1 name', '2 objectType', '3 members', '4 members[0]', '5 $objectType'],
    );
    const missing = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--commit',
      'atomic',
      file(t, 'missing.ndjson', [{ object: 'list', externalId: 'y', name: 'Y', objectType: 'contact', members: ['c1', 'c9'] }]),
    ]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /line 1: members\[1\]: no contact with externalId "c9"/);
    const retype = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--commit',
      'atomic',
      file(t, 'retype.ndjson', [{ object: 'list', externalId: 'l', name: 'L', objectType: 'account' }]),
    ]);
    assert.equal(retype.code, 1);
    assert.match(retype.err, /line 1: objectType: the list "l" holds contact records/);
    assert.deepEqual(await lists(t, s), [['L', 'contact', []]]);
  });

  test('export writes every list with its members; imported into an empty workspace, the lists read the same', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const post = async (url: string, body: unknown): Promise<Entity> => (await call(t, a.secret, 'POST', url, body)).json<Entity>();
    const ann = await post('/v1/contacts', { fields: { $name: { firstName: 'Ann' } } });
    const bo = await post('/v1/contacts', { fields: { $name: { firstName: 'Bo' } } });
    const acme = await post('/v1/accounts', { fields: { $name: 'Acme' } });
    await post('/v1/lists', { fields: { $name: 'Contacts', $objectType: 'contact' }, relationships: { $contacts: [ann.id, bo.id] } });
    await post('/v1/lists', { fields: { $name: 'Empty', $objectType: 'opportunity' } });
    await post('/v1/lists', { fields: { $name: 'Accounts', $objectType: 'account' }, relationships: { $accounts: [acme.id] } });

    const out = join(t.tdb.dataDir, 'export.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, out]);
    assert.equal(ex.code, 0, ex.err);
    const objects = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { object: string }).object);
    assert.ok(objects.lastIndexOf('contact') < objects.indexOf('list'), 'lists come after the records');

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, out, '--json']);
    assert.equal(im.code, 0, im.err);
    // The copies' records carry the originals' ids as externalIds; the originals have none.
    const original = (await lists(t, a)).map(([name, type, members]) => [name, type, members.length]);
    const copy = await lists(t, b);
    assert.deepEqual(
      copy.map(([name, type, members]) => [name, type, members.length]),
      original,
    );
    assert.deepEqual(
      copy.map(([, , members]) => members.toSorted()),
      [[acme.id], [], [ann.id, bo.id].toSorted()],
    );

    // Narrowed to contacts, the export writes the lists of contacts only.
    const only = await rolodex(t, ['export', '--workspace', a.workspaceId, '--types', 'contact', out]);
    assert.equal(only.code, 0, only.err);
    const names = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string; name?: string })
      .filter((l) => l.object === 'list')
      .map((l) => l.name);
    assert.deepEqual(names, ['Contacts']);
  });

  test('a trashed list whose externalId another list now holds stays in the trash', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const line = { object: 'list', externalId: 'l-1', name: 'L', objectType: 'contact' };
    const first = await rolodex(t, ['import', '--workspace', ws, file(t, 'one.ndjson', [line]), '--json']);
    const old = JSON.parse(first.out).ids.list['l-1'] as string;
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/lists/${old}`)).statusCode, 200);
    const second = await rolodex(t, ['import', '--workspace', ws, file(t, 'two.ndjson', [{ ...line, name: 'New' }]), '--json']);
    assert.notEqual(JSON.parse(second.out).ids.list['l-1'], old);
    const r = await rolodex(t, ['trash', 'restore', '--workspace', ws, old]);
    assert.equal(r.code, 1);
    assert.match(r.err, /duplicate_value|externalId "l-1"/);
    assert.match(r.err, /stays in the trash/);
    assert.deepEqual(await lists(t, s), [['New', 'contact', []]]);
  });
});
