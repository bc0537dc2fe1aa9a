// Meetings through `rolodex import` and `rolodex export` (docs/import.md §`meeting`, §Export;
// docs/meetings.md §Import): the import kind creates and updates meetings by externalId, checked as
// the API checks a create, with the API's events and derived relationships; an export writes every
// live meeting, and its import into an empty workspace reads the same through the API.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { ago, meetingBody } from '../helpers/meetings.ts';

type Rels = Record<string, { values: string[] }>;
type Meeting = {
  id: string;
  externalId: string | null;
  createdAt: string;
  updatedAt: string;
  accessLevel: string;
  fields: Record<string, { value: unknown }>;
  relationships: Rels;
};
type Ids = Record<string, Record<string, string>>;

function file(t: TestApp, name: string, objects: object[]): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, objects.map((o) => JSON.stringify(o)).join('\n'));
  return path;
}

async function importJson(t: TestApp, ws: string, name: string, objects: object[]): Promise<{ ids: Ids }> {
  const r = await rolodex(t, ['import', '--workspace', ws, file(t, name, objects), '--json']);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as { ids: Ids };
}

// The valueTypes are optional in a line; the export writes them, and the round trip takes them back.
const meeting = (externalId: string, fields: Record<string, unknown>) => ({
  object: 'meeting',
  externalId,
  fields: Object.fromEntries(Object.entries(fields).map(([k, value]) => [k, { value }])),
});
const past = { $title: 'Kick-off', $startDate: '2025-01-10T10:00:00+01:00', $endDate: '2025-01-10T10:30:00Z' };

const records = [
  { object: 'account', externalId: 'a1', fields: { $name: { value: 'Acme', valueType: 'TEXT' } } },
  {
    object: 'contact',
    externalId: 'c-ann',
    fields: { $email: { value: ['Ann@Acme.test'], valueType: 'EMAIL' } },
    relationships: { $account: { values: ['a1'] } },
  },
  { object: 'contact', externalId: 'c-bo', fields: { $email: { value: ['bo@beta.test'], valueType: 'EMAIL' } } },
  { object: 'opportunity', externalId: 'o1', fields: { $name: { value: 'Deal', valueType: 'TEXT' } }, relationships: { $account: { values: ['a1'] } } },
];

const derived = (m: Meeting) => Object.fromEntries(['$contact', '$account', '$opportunity'].map((k) => [k, m.relationships[k]?.values]));

eachDialect('meetings through import and export', (ctx) => {
  test('the meeting kind creates and updates a past meeting by externalId, with the derived relationships and events of the API', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const get = async (id: string) => (await call(t, s.secret, 'GET', `/v1/meetings/${id}`)).json<Meeting>();
    const first = {
      ...past,
      $description: 'Agenda',
      $meetingUrl: 'https://meet.test/abc',
      $organizerEmail: 'ann@acme.test',
      $attendeeEmails: ['BO@Beta.test', 'zed@nowhere.test'],
      $privacySetting: null,
    };
    const one = await importJson(t, ws, 'one.ndjson', [
      meeting('m-1', first),
      ...records,
      meeting('m-2', { ...past, $startDate: '2025-01-10T12:00:00Z', $endDate: '2025-01-10T13:00:00Z' }),
    ]);
    const id = one.ids.meeting?.['m-1'] as string;
    const m1 = await get(id);
    assert.equal(m1.externalId, 'm-1');
    assert.equal(m1.accessLevel, 'FULL');
    assert.deepEqual(Object.fromEntries(Object.entries(m1.fields).map(([k, f]) => [k, f.value])), {
      ...first,
      $startDate: '2025-01-10T09:00:00.000Z',
      $endDate: '2025-01-10T10:30:00.000Z',
    });
    const c = one.ids.contact as Record<string, string>;
    const want = { $contact: [c['c-ann'], c['c-bo']].toSorted(), $account: [one.ids.account?.a1], $opportunity: [one.ids.opportunity?.o1] };
    assert.deepEqual(derived(m1), want);
    assert.deepEqual(m1.relationships.$transcript?.values, []);
    // The API computes the same for the same participants; the import made no record for zed.
    const api = await call(
      t,
      s.secret,
      'POST',
      '/v1/meetings',
      meetingBody({ $organizerEmail: 'ANN@acme.test', $attendeeEmails: ['bo@beta.test', 'zed@nowhere.test'] }),
    );
    assert.equal(api.statusCode, 200, api.body);
    assert.deepEqual(derived(api.json<Meeting>()), want);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts?limit=25')).json().totalCount, 2);
    const order = async () => ((await call(t, s.secret, 'GET', '/v1/meetings?limit=25')).json().data as Meeting[]).map((m) => m.externalId ?? 'api');
    assert.deepEqual(await order(), ['api', 'm-2', 'm-1']);

    const second = { ...first, $title: 'Kick-off (moved)', $startDate: '2025-01-11T09:00:00Z', $endDate: '2025-01-11T10:00:00Z', $description: 'New' };
    const moved = { ...second, $attendeeEmails: ['zed@nowhere.test'], $privacySetting: 'METADATA' };
    const two = await importJson(t, ws, 'two.ndjson', [meeting('m-1', moved)]);
    assert.equal(two.ids.meeting?.['m-1'], id);
    const m1b = await get(id);
    assert.equal(m1b.createdAt, m1.createdAt);
    assert.notEqual(m1b.updatedAt, m1.updatedAt);
    assert.equal(m1b.accessLevel, 'METADATA');
    assert.equal(m1b.fields.$title?.value, 'Kick-off (moved)');
    assert.equal(m1b.fields.$description?.value, null);
    assert.deepEqual(derived(m1b), { ...want, $contact: [c['c-ann']] });
    assert.deepEqual(await order(), ['api', 'm-1', 'm-2']);
    // The same line again changes nothing and appends nothing.
    await importJson(t, ws, 'three.ndjson', [meeting('m-1', moved)]);
    assert.equal((await get(id)).updatedAt, m1b.updatedAt);

    const log = await t.deps.db.kysely.selectFrom('events').select(['type', 'body']).where('workspace_id', '=', ws).orderBy('seq').execute();
    const events = log.filter((e) => e.type.startsWith('meeting.'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['meeting.created', 'meeting.created', 'meeting.created', 'meeting.updated'],
    );
    const updated = JSON.parse(events.at(-1)?.body as string) as { data: { object: Meeting; changes: Record<string, unknown> } };
    assert.deepEqual(Object.keys(updated.data.changes).toSorted(), ['$attendeeEmails', '$description', '$endDate', '$privacySetting', '$startDate', '$title']);
    assert.equal(updated.data.object.fields.$description?.value, 'New');
    assert.deepEqual(updated.data.object.relationships.$contact?.values, [c['c-ann']]);
  });

  test('bad meeting lines are reported with their line and field; an atomic import then writes nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [
      records[2] as object,
      meeting('ok', past),
      meeting('x1', { ...past, $startDate: '2025-01-10T09:00:00' }),
      meeting('x2', { ...past, $endDate: '2025-01-10T08:00:00Z' }),
      meeting('x3', { ...past, $attendeeEmails: ['ann@acme.test', 'Ann <ann@acme.test>'] }),
      { ...meeting('x4', past), fields: { ...meeting('x4', past).fields, $location: { value: 'Berlin', valueType: 'TEXT' } } },
      { ...meeting('x5', past), autoCreateRecords: true },
      meeting('x6', { ...past, $endDate: ago(-3_600_000) }),
      meeting('x7', { ...past, $attendeeEmails: ['bo@beta.test', 'BO@beta.test'] }),
      { ...meeting('x8', past), relationships: { $contact: { values: ['c-bo'] } } },
      meeting('x9', { ...past, $startDate: '2025-02-30T09:00:00Z' }),
      meeting('x10', { ...past, $organizerEmail: 'nobody' }),
      { ...meeting('x11', past), fields: { ...meeting('x11', past).fields, $meetingUrl: { value: 'https://meet.test', valueType: 'TEXT' } } },
    ];
    const bad = await rolodex(t, ['import', '--workspace', s.workspaceId, '--commit', 'atomic', file(t, 'bad.ndjson', lines)]);
    assert.equal(bad.code, 1);
    assert.deepEqual(
      [...bad.err.matchAll(/^line (\d+): ([^:]+):/gm)].map(([, line, field]) => `${line} ${field}`),
      [
        '3 fields.$startDate.value',
        '4 fields.$endDate.value',
        '5 fields.$attendeeEmails.value[1]',
        '6 fields.$location',
        '7 autoCreateRecords',
        '8 fields.$endDate.value',
        '9 fields.$attendeeEmails.value[1]',
        '10 relationships.$contact',
        '11 fields.$startDate.value',
        '12 fields.$organizerEmail.value',
        '13 fields.$meetingUrl.valueType',
      ],
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/meetings?limit=25')).json().totalCount, 0);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts?limit=25')).json().totalCount, 0);
  });

  test('export writes every live meeting; imported into an empty workspace, the meetings read the same', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const post = async (url: string, body: unknown): Promise<Meeting> => {
      const r = await call(t, a.secret, 'POST', url, body);
      assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      return r.json<Meeting>();
    };
    const acme = await post('/v1/accounts', { fields: { $name: 'Acme' } });
    await post('/v1/contacts', { fields: { $email: ['ann@acme.test'] }, relationships: { $account: [acme.id] } });
    await post('/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acme.id } });
    await post('/v1/lists', { fields: { $name: 'Hot', $objectType: 'account' } });
    await post(
      '/v1/meetings',
      meetingBody({
        $organizerEmail: 'Ann@Acme.test',
        $attendeeEmails: ['bo@beta.test'],
        $description: 'Notes',
        $meetingUrl: 'https://meet.test/x',
        $privacySetting: 'METADATA',
      }),
    );
    await post('/v1/meetings', meetingBody({ $title: 'Bare', $startDate: ago(86_400_000), $endDate: ago(86_400_000) }));
    await post('/v1/meetings', meetingBody({ $title: 'Nobody', $attendeeEmails: [], $privacySetting: 'FULL' }));
    const gone = await post('/v1/meetings', meetingBody({ $title: 'Trashed' }));
    assert.equal((await call(t, a.secret, 'DELETE', `/v1/meetings/${gone.id}`)).statusCode, 200);
    await importJson(t, a.workspaceId, 'a.ndjson', [meeting('m-imp', { ...past, $attendeeEmails: ['ann@acme.test'] })]);

    const out = join(t.tdb.dataDir, 'export.ndjson');
    const exportMeetings = async (ws: string) => {
      const ex = await rolodex(t, ['export', '--workspace', ws, out]);
      assert.equal(ex.code, 0, ex.err);
      return readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { object: string; externalId: string });
    };
    const lines = await exportMeetings(a.workspaceId);
    const objects = lines.map((l) => l.object);
    assert.ok(objects.lastIndexOf('list') < objects.indexOf('meeting'), 'meetings come after the lists');
    assert.equal(objects.filter((o) => o === 'meeting').length, 4);
    assert.ok(!lines.some((l) => l.externalId === gone.id), 'a meeting in the trash is not written');

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, out, '--json']);
    assert.equal(im.code, 0, im.err);
    const ids = (JSON.parse(im.out) as { ids: Ids }).ids;
    // Both sides read with a workspace key, whose access follows the privacy setting alone.
    const read = async (ws: string) => (await call(t, await keyFor(t, ws, null), 'GET', '/v1/meetings?limit=25')).json().data as Meeting[];
    const original = await read(a.workspaceId);
    const copy = await read(b.workspaceId);
    const rename = (kind: string, values: string[] | undefined) => (values ?? []).map((v) => ids[kind]?.[v]).toSorted();
    assert.deepEqual(
      copy.map((m) => [m.id, m.accessLevel, m.fields, derived(m)]),
      original.map((m) => [
        ids.meeting?.[m.externalId ?? m.id],
        m.accessLevel,
        m.fields,
        {
          $contact: rename('contact', m.relationships.$contact?.values),
          $account: rename('account', m.relationships.$account?.values),
          $opportunity: rename('opportunity', m.relationships.$opportunity?.values),
        },
      ]),
    );
    assert.ok(original.some((m) => m.relationships.$opportunity?.values.length === 1));
    // What a full-access export holds (descriptions included) comes back line for line.
    const again = await exportMeetings(b.workspaceId);
    assert.deepEqual(
      again.filter((l) => l.object === 'meeting'),
      lines.filter((l) => l.object === 'meeting'),
    );
  });

  test('a trashed meeting whose externalId another meeting now holds stays in the trash', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const old = (await importJson(t, ws, 'one.ndjson', [meeting('m-1', past)])).ids.meeting?.['m-1'] as string;
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/meetings/${old}`)).statusCode, 200);
    const now = (await importJson(t, ws, 'two.ndjson', [meeting('m-1', past)])).ids.meeting?.['m-1'];
    assert.notEqual(now, old);
    const r = await rolodex(t, ['trash', 'restore', '--workspace', ws, old]);
    assert.equal(r.code, 1);
    assert.match(r.err, /externalId "m-1"/);
    assert.equal((await call(t, s.secret, 'GET', '/v1/meetings?limit=25')).json().totalCount, 1);
  });
});
