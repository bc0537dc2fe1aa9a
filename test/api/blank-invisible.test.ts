// A required text that shows nothing (docs/records.md §Writing fields): white space, control
// characters and invisible ones (U+200B, U+2060, U+FEFF, the soft hyphen, a Hangul filler, bidi
// marks) alone are refused alike, by records (notes and tasks included), lists and meetings, on
// every write and by the import; a value with a visible character is kept as written.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { meetingBody } from '../helpers/meetings.ts';

const SHOWING_NOTHING = ['\u200B', '\u2060', '\uFEFF', ' \u200B\u200B ', '\u00AD', '\u3164', '\u200E\u200F', '\u0007', '\t\u2060\n'];

eachDialect('required texts of invisible characters alone', (ctx) => {
  async function refused(t: TestApp, s: Seeded, url: string, body: unknown, param: string) {
    const r = await call(t, s.secret, 'POST', url, body);
    assert.equal(r.statusCode, 400, `${url} ${JSON.stringify(body)}: ${r.body}`);
    assert.equal(r.json().error.type, 'bad_request', r.body);
    assert.deepEqual([r.json().error.code, r.json().error.param], ['invalid_value', param], `${url} ${JSON.stringify(body)}: ${r.body}`);
  }
  async function total(t: TestApp, s: Seeded, url: string): Promise<number> {
    return (await call(t, s.secret, 'GET', url)).json().totalCount;
  }

  test('notes, tasks, accounts, names, addresses, lists and meetings refuse them on create and update, and change nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
    const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } })).json();
    const note = (await call(t, s.secret, 'POST', '/v1/notes', { fields: { $title: 'Call' } })).json();
    const task = (await call(t, s.secret, 'POST', '/v1/tasks', { fields: { $title: 'Do', $status: 'TODO' }, relationships: { $assignedTo: s.userId } })).json();
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Key', $objectType: 'account' } })).json();
    for (const blank of SHOWING_NOTHING) {
      await refused(t, s, '/v1/notes', { fields: { $title: blank } }, 'fields.$title');
      await refused(t, s, `/v1/notes/${note.id}`, { fields: { $title: blank } }, 'fields.$title');
      await refused(t, s, '/v1/tasks', { fields: { $title: blank, $status: 'TODO' }, relationships: { $assignedTo: s.userId } }, 'fields.$title');
      await refused(t, s, `/v1/tasks/${task.id}`, { fields: { $title: blank } }, 'fields.$title');
      await refused(t, s, '/v1/accounts', { fields: { $name: blank } }, 'fields.$name');
      await refused(t, s, `/v1/accounts/${acc.id}`, { fields: { $name: blank } }, 'fields.$name');
      await refused(t, s, `/v1/contacts/${con.id}`, { fields: { $name: { firstName: blank, lastName: ' ' } } }, 'fields.$name');
      await refused(t, s, `/v1/accounts/${acc.id}`, { fields: { $primaryAddress: { city: blank } } }, 'fields.$primaryAddress');
      await refused(t, s, '/v1/lists', { fields: { $name: blank, $objectType: 'account' } }, 'fields.$name');
      await refused(t, s, `/v1/lists/${list.id}`, { fields: { $name: blank } }, 'fields.$name');
      await refused(t, s, '/v1/meetings', meetingBody({ $title: blank }), 'fields.$title');
    }
    assert.deepEqual(
      await Promise.all(['/v1/notes', '/v1/tasks', '/v1/accounts', '/v1/lists', '/v1/meetings'].map((u) => total(t, s, u))),
      [1, 1, 1, 1, 0],
      'nothing was created',
    );
    const get = async (url: string) => (await call(t, s.secret, 'GET', url)).json();
    assert.equal((await get(`/v1/notes/${note.id}`)).fields.$title.value, 'Call');
    assert.equal((await get(`/v1/tasks/${task.id}`)).fields.$title.value, 'Do');
    assert.equal((await get(`/v1/accounts/${acc.id}`)).fields.$name.value, 'Acme');
    assert.equal((await get(`/v1/accounts/${acc.id}`)).fields.$primaryAddress.value, null);
    assert.deepEqual((await get(`/v1/contacts/${con.id}`)).fields.$name.value, { firstName: 'Ann' });
    assert.equal((await get(`/v1/lists/${list.id}`)).fields.$name.value, 'Key');

    // A visible character among them is a value, kept as written (a list's name without the spaces around it).
    const kept = '\u200BQ3\u2060';
    assert.equal((await call(t, s.secret, 'POST', `/v1/notes/${note.id}`, { fields: { $title: kept } })).json().fields.$title.value, kept);
    assert.equal((await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: ` ${kept} `, $objectType: 'account' } })).json().fields.$name.value, kept);
    assert.equal((await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $title: kept }))).json().fields.$title.value, kept);
  });

  test('the import refuses them in a record, a list and a meeting, naming the line and the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [
      { object: 'note', externalId: 'n1', fields: { $title: { value: '\u200B' } } },
      { object: 'list', externalId: 'l1', name: '\u2060', objectType: 'account' },
      {
        object: 'meeting',
        externalId: 'm1',
        fields: { $title: { value: '\uFEFF\u200B' }, $startDate: { value: '2025-01-10T09:00:00Z' }, $endDate: { value: '2025-01-10T09:30:00Z' } },
      },
    ];
    for (const [i, line] of lines.entries()) {
      const file = join(t.tdb.dataDir, `blank-${i}.ndjson`);
      writeFileSync(file, `${JSON.stringify(line)}\n`);
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
      assert.equal(r.code, 1, `${JSON.stringify(line)}: ${r.out}`);
      assert.match(r.err, /line 1: (fields\.\$title\.value|name): /, r.err);
    }
    assert.deepEqual(await Promise.all(['/v1/notes', '/v1/lists', '/v1/meetings'].map((u) => total(t, s, u))), [0, 0, 0]);
  });

  test("a member's name part of white space and invisible characters alone is not known, as a contact's would be refused", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const file = join(t.tdb.dataDir, 'users.ndjson');
    const users = [
      { object: 'user', externalId: 'u1', email: 'ann@acme.test', firstName: '\u200B', lastName: 'Lee' },
      { object: 'user', externalId: 'u2', email: 'bob@acme.test', name: '\u2060 \uFEFF' },
      { object: 'user', externalId: 'u3', email: 'cy@acme.test', firstName: 'Cy', lastName: '\u3164' },
    ];
    writeFileSync(file, users.map((u) => JSON.stringify(u)).join('\n'));
    const im = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(im.code, 0, im.err);
    const cli = await rolodex(t, ['user', 'create', '--workspace', s.workspaceId, '--email', 'di@acme.test', '--first-name', '\u200B\u200B']);
    assert.equal(cli.code, 0, cli.err);
    const names = new Map<string, unknown>(
      (await call(t, s.secret, 'GET', '/v1/members'))
        .json()
        .data.map((m: { fields: Record<string, { value: unknown }> }) => [m.fields.$email!.value, m.fields.$name!.value]),
    );
    assert.deepEqual(names.get('ann@acme.test'), { lastName: 'Lee' });
    assert.deepEqual(names.get('bob@acme.test'), {});
    assert.deepEqual(names.get('cy@acme.test'), { firstName: 'Cy' });
    assert.deepEqual(names.get('di@acme.test'), {});
  });

  test('an export leaves out a required text an older release stored with invisible characters alone, so it imports', async () => {
    const t = ctx();
    const [a, b] = [await seedWorkspace(t), await seedWorkspace(t)];
    const note = (await call(t, a.secret, 'POST', '/v1/notes', { fields: { $title: 'Call', $content: 'Hi' } })).json();
    const db = t.deps.db.kysely;
    const row = await db.selectFrom('records').select('fields').where('id', '=', note.id).executeTakeFirstOrThrow();
    await db
      .updateTable('records')
      .set({ fields: JSON.stringify({ ...JSON.parse(row.fields), $title: '\u200B' }) })
      .where('id', '=', note.id)
      .execute();
    const file = join(t.tdb.dataDir, 'invisible.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const line = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string; fields?: Record<string, unknown> })
      .find((l) => l.object === 'note')!;
    assert.ok(!('$title' in line.fields!), JSON.stringify(line));
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file]);
    assert.equal(im.code, 0, im.err);
    const [copy] = (await call(t, b.secret, 'GET', '/v1/notes')).json().data;
    assert.deepEqual([copy.fields.$title.value, copy.fields.$content.value], [null, 'Hi']);
  });
});
