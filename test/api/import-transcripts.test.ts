// Transcripts through `rolodex import` (docs/import.md §`channel`, `message`, `file` and §`meeting`;
// docs/files.md §Purposes, docs/meetings.md §Writes): the `purpose` of a file line is checked as the
// API's create checks it (values, content type, size ceiling), and a meeting line names its
// transcript file by externalId, checked as the API checks `$transcript`; errors name the line and
// the field. What a purpose does is seen through the API, which takes an imported meeting_transcript
// file as a meeting's transcript and refuses a file without it. A re-import may give a file a
// purpose, never change the one it has, and replaces a meeting's transcript when the line names one.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { meetingBody } from '../helpers/meetings.ts';

type Ids = Record<string, Record<string, string>>;

let n = 0;
/** Writes `content` under the test's data directory; returns its path. */
function bytes(t: TestApp, content: string | Buffer): string {
  const path = join(t.tdb.dataDir, `bytes-${process.pid}-${n++}`);
  writeFileSync(path, content);
  return path;
}

async function importLines(t: TestApp, ws: string, objects: object[]): Promise<{ code: number; ids: Ids; err: string }> {
  const path = bytes(t, objects.map((o) => JSON.stringify(o)).join('\n'));
  const r = await rolodex(t, ['import', '--workspace', ws, '--commit', 'atomic', path, '--json']);
  return { code: r.code, ids: r.code === 0 ? (JSON.parse(r.out) as { ids: Ids }).ids : {}, err: r.err };
}

/** `line field` of each error an import reported. */
const reported = (err: string) => [...err.matchAll(/^line (\d+): ([^:]+):/gm)].map(([, line, field]) => `${line} ${field}`);

const fileLine = (t: TestApp, externalId: string, extra: Record<string, unknown> = {}) => ({
  object: 'file',
  externalId,
  source: 'app',
  filename: `${externalId}.txt`,
  mimeType: 'text/plain',
  path: bytes(t, `the call of ${externalId}\n`),
  ...extra,
});

/** The status of the API's answer when a new meeting names the file as its transcript. */
async function asTranscript(t: TestApp, secret: string, fileId: string): Promise<number> {
  const r = await call(t, secret, 'POST', '/v1/meetings', meetingBody({}, { relationships: { $transcript: fileId } }));
  if (r.statusCode !== 200) assert.equal(r.json().error.param, 'relationships.$transcript', r.body);
  return r.statusCode;
}

eachDialect('a file purpose through import', (ctx) => {
  test('a file line with purpose meeting_transcript makes a file the API takes as a transcript; one without makes one it refuses', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const r = await importLines(t, s.workspaceId, [
      fileLine(t, 'f-call', { purpose: 'meeting_transcript', mimeType: 'text/vtt; charset=utf-8' }),
      fileLine(t, 'f-plain'),
      fileLine(t, 'f-mail', { purpose: 'email_attachment', mimeType: 'image/png' }),
    ]);
    assert.equal(r.code, 0, r.err);
    const ids = r.ids.file as Record<string, string>;
    assert.equal(await asTranscript(t, s.secret, ids['f-call'] as string), 200);
    assert.equal(await asTranscript(t, s.secret, ids['f-plain'] as string), 400);
    assert.equal(await asTranscript(t, s.secret, ids['f-mail'] as string), 400);
  });

  test('a bad purpose, a type or a size its rule refuses are reported with the line and the field; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const bad = await importLines(t, s.workspaceId, [
      fileLine(t, 'ok', { purpose: 'meeting_transcript' }),
      fileLine(t, 'x1', { purpose: 'transcript' }),
      fileLine(t, 'x2', { purpose: 'meeting_transcript', mimeType: 'image/png' }),
      fileLine(t, 'x3', { purpose: 'knowledge_workspace' }),
      fileLine(t, 'x4', { purpose: 7 }),
    ]);
    assert.equal(bad.code, 1);
    assert.deepEqual(reported(bad.err), ['2 purpose', '3 mimeType', '4 purpose', '5 purpose']);
    assert.match(bad.err, /line 3: mimeType: "image\/png" is not allowed for purpose meeting_transcript; allowed: text\/plain/);
    // The size ceiling of the purpose (20 MB for email_attachment), found while the bytes are copied.
    const big = await importLines(t, s.workspaceId, [
      fileLine(t, 'ok'),
      fileLine(t, 'huge', { purpose: 'email_attachment', path: bytes(t, Buffer.alloc(20 * 1024 * 1024 + 1)) }),
    ]);
    assert.equal(big.code, 1);
    assert.match(big.err, /^line 2: path: the file is over the ceiling of 20971520 bytes for purpose email_attachment$/m);
    const files = await t.deps.db.kysely.selectFrom('files').select('id').where('workspace_id', '=', s.workspaceId).execute();
    assert.deepEqual(files, []);
  });

  test('a re-import gives a file the purpose it lacks, keeps the one it has when the line gives none, and never changes it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await importLines(t, s.workspaceId, [fileLine(t, 'f-1'), fileLine(t, 'f-2', { purpose: 'meeting_transcript' })]);
    assert.equal(first.code, 0, first.err);
    const ids = first.ids.file as Record<string, string>;
    assert.equal(await asTranscript(t, s.secret, ids['f-1'] as string), 400);

    const again = await importLines(t, s.workspaceId, [fileLine(t, 'f-1', { purpose: 'meeting_transcript' }), fileLine(t, 'f-2')]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(again.ids.file, ids);
    assert.equal(await asTranscript(t, s.secret, ids['f-1'] as string), 200, 'the purpose given');
    assert.equal(await asTranscript(t, s.secret, ids['f-2'] as string), 200, 'the purpose kept');

    const changed = await importLines(t, s.workspaceId, [fileLine(t, 'f-1', { purpose: 'email_attachment' }), fileLine(t, 'f-2', { mimeType: 'image/png' })]);
    assert.equal(changed.code, 1);
    assert.match(changed.err, /^line 1: purpose: the file has purpose meeting_transcript/m);
    const kept = await importLines(t, s.workspaceId, [fileLine(t, 'f-2', { mimeType: 'image/png' })]);
    assert.equal(kept.code, 1);
    assert.match(kept.err, /^line 1: mimeType: "image\/png" is not allowed for purpose meeting_transcript/m);
    assert.equal(await asTranscript(t, s.secret, ids['f-1'] as string), 200);
  });
});

type Meeting = { id: string; updatedAt: string; relationships: Record<string, { values: string[] }> };

const meetingLine = (externalId: string, transcript?: string, title = 'Kick-off') => ({
  object: 'meeting',
  externalId,
  fields: { $title: { value: title }, $startDate: { value: '2025-01-10T09:00:00Z' }, $endDate: { value: '2025-01-10T09:30:00Z' } },
  ...(transcript === undefined ? {} : { relationships: { $transcript: { objectType: 'file', values: [transcript] } } }),
});

eachDialect('a meeting transcript through import', (ctx) => {
  test('a meeting line names its transcript by externalId, on any line; a re-import replaces it, and a line naming none keeps it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const get = async (id: string) => (await call(t, s.secret, 'GET', `/v1/meetings/${id}`)).json<Meeting>();
    const first = await importLines(t, ws, [
      fileLine(t, 'f-early', { purpose: 'meeting_transcript' }),
      meetingLine('m-1', 'f-late'),
      meetingLine('m-2', 'f-early'),
      meetingLine('m-3'),
      fileLine(t, 'f-late', { purpose: 'meeting_transcript', mimeType: 'application/json' }),
    ]);
    assert.equal(first.code, 0, first.err);
    const [files, meetings] = [first.ids.file as Record<string, string>, first.ids.meeting as Record<string, string>];
    const m1 = await get(meetings['m-1'] as string);
    assert.deepEqual(m1.relationships.$transcript?.values, [files['f-late']]);
    assert.deepEqual((await get(meetings['m-2'] as string)).relationships.$transcript?.values, [files['f-early']]);
    assert.deepEqual((await get(meetings['m-3'] as string)).relationships.$transcript?.values, []);

    // A file already in the workspace; the title stays, so only the transcript changes.
    const second = await importLines(t, ws, [meetingLine('m-1', 'f-early')]);
    assert.equal(second.code, 0, second.err);
    const m1b = await get(meetings['m-1'] as string);
    assert.deepEqual(m1b.relationships.$transcript?.values, [files['f-early']]);
    assert.notEqual(m1b.updatedAt, m1.updatedAt);
    for (const line of [meetingLine('m-1'), meetingLine('m-1', 'f-early')]) {
      assert.equal((await importLines(t, ws, [line])).code, 0);
      const again = await get(meetings['m-1'] as string);
      assert.deepEqual(again.relationships.$transcript?.values, [files['f-early']]);
      assert.equal(again.updatedAt, m1b.updatedAt, 'nothing changed, nothing written');
    }

    const log = await t.deps.db.kysely.selectFrom('events').select(['type', 'body']).where('workspace_id', '=', ws).orderBy('seq').execute();
    const events = log
      .filter((e) => e.type.startsWith('meeting.'))
      .map((e) => JSON.parse(e.body) as { type: string; data: { object: Meeting; changes?: object } });
    assert.deepEqual(
      events.map((e) => e.type),
      ['meeting.created', 'meeting.created', 'meeting.created', 'meeting.updated'],
    );
    assert.deepEqual(events[0]?.data.object.relationships.$transcript?.values, [files['f-late']]);
    assert.deepEqual(events[3]?.data.changes, { $transcript: { from: [files['f-late']], to: [files['f-early']] } });
  });

  test('a transcript naming a missing file, or a file without purpose meeting_transcript, is refused with the line and the field; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const missing = await importLines(t, ws, [fileLine(t, 'f-1', { purpose: 'meeting_transcript' }), meetingLine('m-1', 'f-1'), meetingLine('m-2', 'f-9')]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^line 3: relationships\.\$transcript\.values\[0\]: no COMPLETED file with externalId "f-9" in this import or the workspace$/m);
    const plain = await importLines(t, ws, [fileLine(t, 'f-2'), meetingLine('m-1', 'f-2')]);
    assert.equal(plain.code, 1);
    assert.match(plain.err, /^line 2: relationships\.\$transcript\.values\[0\]: file "f-2" has no purpose meeting_transcript/m);
    const shape = await importLines(t, ws, [
      meetingLine('m-1'),
      { ...meetingLine('m-2'), relationships: { $transcript: { values: [] } } },
      { ...meetingLine('m-3'), relationships: { $transcript: { values: ['f-1', 'f-2'] } } },
      { ...meetingLine('m-4'), relationships: { $transcript: { objectType: 'contact', values: ['f-1'] } } },
      { ...meetingLine('m-5'), relationships: { $files: { values: ['f-1'] } } },
      { ...meetingLine('m-6'), relationships: { $account: { values: ['a-1'] } } },
    ]);
    assert.equal(shape.code, 1);
    assert.deepEqual(reported(shape.err), [
      '2 relationships.$transcript.values',
      '3 relationships.$transcript.values',
      '4 relationships.$transcript.objectType',
      '5 relationships.$files',
      '6 relationships.$account',
    ]);
    const count = async (table: 'files' | 'meetings') =>
      (await t.deps.db.kysely.selectFrom(table).select('id').where('workspace_id', '=', ws).execute()).length;
    assert.deepEqual([await count('files'), await count('meetings')], [0, 0]);
  });
});
