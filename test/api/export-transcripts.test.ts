// Transcripts through `rolodex export --files DIR` (docs/import.md §Export): a file line carries the
// file's purpose and a meeting line its transcript, named as the file lines name files, so an import
// of the export into an empty workspace reproduces both, compared through the API: each meeting's
// transcript is the copy of its file, and a copied file is taken as a transcript exactly when the
// original is. Without --files, no file and no transcript is written, and the export imports cleanly.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { uploadFile } from '../helpers/files.ts';
import { meetingBody, transcript } from '../helpers/meetings.ts';

type Line = { object: string; externalId: string; purpose?: string; path?: string; relationships?: Record<string, { values: string[] }> };
type Meeting = { id: string; externalId: string | null; fields: Record<string, { value: unknown }>; relationships: Record<string, { values: string[] }> };
type Ids = Record<string, Record<string, string>>;

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

async function exportTo(t: TestApp, ws: string, name: string, files: boolean): Promise<{ file: string; lines: Line[] }> {
  const file = join(t.tdb.dataDir, `${name}-${ws}.ndjson`);
  const r = await rolodex(t, ['export', '--workspace', ws, ...(files ? ['--files', join(t.tdb.dataDir, `${name}-${ws}`)] : []), file]);
  assert.equal(r.code, 0, r.err);
  return { file, lines: linesOf(file) };
}

async function importInto(t: TestApp, file: string): Promise<{ s: Seeded; ids: Ids }> {
  const s = await seedWorkspace(t);
  const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file, '--json']);
  assert.equal(r.code, 0, r.err);
  return { s, ids: (JSON.parse(r.out) as { ids: Ids }).ids };
}

/** The workspace's meetings as a workspace key reads them (FULL unless their privacy is METADATA). */
async function meetings(t: TestApp, ws: string): Promise<Meeting[]> {
  return (await call(t, await keyFor(t, ws, null), 'GET', '/v1/meetings?limit=25')).json().data as Meeting[];
}

/** Whether the API takes the file as a new meeting's transcript (else it answers 400 at $transcript). */
async function takenAsTranscript(t: TestApp, s: Seeded, fileId: string): Promise<boolean> {
  const r = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $title: 'probe' }, { relationships: { $transcript: fileId } }));
  if (r.statusCode !== 200) assert.equal(r.json().error.param, 'relationships.$transcript', r.body);
  return r.statusCode === 200;
}

eachDialect('transcripts through export and import', (ctx) => {
  test('export --files writes purposes and transcripts; imported into an empty workspace, the API reads the same transcripts and takes the same files as transcripts', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const ok = async (url: string, body: unknown): Promise<Meeting> => {
      const r = await call(t, a.secret, 'POST', url, body);
      assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      return r.json<Meeting>();
    };
    const call1 = await transcript(t, a.secret, 'WEBVTT\n\nAnn: hello\n', { filename: 'call.vtt', mimeType: 'text/vtt' });
    const plain = (await uploadFile(t, a.secret, Buffer.from('notes'), { filename: 'notes.txt', mimeType: 'text/plain' })).id;
    const mail = (await uploadFile(t, a.secret, Buffer.from('%PDF'), { filename: 'a.pdf', mimeType: 'application/pdf', purpose: 'email_attachment' })).id;
    const known = (await uploadFile(t, a.secret, Buffer.from('# Guide'), { filename: 'guide.md', mimeType: 'text/markdown', purpose: 'knowledge_workspace' }))
      .id;
    await ok('/v1/meetings', meetingBody({ $title: 'With transcript', $privacySetting: 'FULL' }, { relationships: { $transcript: call1 } }));
    await ok('/v1/meetings', meetingBody({ $title: 'Without' }));
    const src = join(t.tdb.dataDir, `call-${a.workspaceId}.txt`);
    writeFileSync(src, 'Bo: imported call\n');
    const objects = [
      {
        object: 'meeting',
        externalId: 'm-imp',
        fields: { $title: { value: 'Imported' }, $startDate: { value: '2025-01-10T09:00:00Z' }, $endDate: { value: '2025-01-10T10:00:00Z' } },
        relationships: { $transcript: { values: ['f-call'] } },
      },
      { object: 'file', externalId: 'f-call', source: 'app', filename: 'call.txt', mimeType: 'text/plain', path: src, purpose: 'meeting_transcript' },
    ];
    const source = join(t.tdb.dataDir, `source-${a.workspaceId}.ndjson`);
    writeFileSync(source, objects.map((o) => JSON.stringify(o)).join('\n'));
    const loaded = await rolodex(t, ['import', '--workspace', a.workspaceId, source, '--json']);
    assert.equal(loaded.code, 0, loaded.err);
    const aIds = (JSON.parse(loaded.out) as { ids: Ids }).ids;

    const { file, lines } = await exportTo(t, a.workspaceId, 'full', true);
    const purposes = Object.fromEntries(lines.filter((l) => l.object === 'file').map((l) => [l.externalId, l.purpose ?? null]));
    assert.deepEqual(purposes, { [call1]: 'meeting_transcript', [plain]: null, [mail]: 'email_attachment', [known]: null, 'f-call': 'meeting_transcript' });
    // In id order: the API's meeting with a transcript, the one without, the imported one.
    const meetingLines = (ls: Line[]) => ls.filter((l) => l.object === 'meeting');
    assert.deepEqual(
      meetingLines(lines).map((l) => l.relationships ?? null),
      [{ $transcript: { objectType: 'file', values: [call1] } }, null, { $transcript: { objectType: 'file', values: ['f-call'] } }],
    );

    const b = await importInto(t, file);
    // The copy exports the same meeting lines, transcripts named alike.
    assert.deepEqual(meetingLines((await exportTo(t, b.s.workspaceId, 'again', true)).lines), meetingLines(lines));
    // Meetings read the same, each transcript the copy of its file (named by its externalId in b).
    const aName = new Map<string, string>([[call1, call1], ...Object.entries(aIds.file ?? {}).map(([ext, id]) => [id, ext] as [string, string])]);
    const shown = (ms: Meeting[], name: (id: string) => string | undefined, meetingId: (m: Meeting) => string | undefined) =>
      ms.map((m) => [meetingId(m), m.fields, m.relationships.$transcript?.values.map(name)]);
    const bName = new Map(Object.entries(b.ids.file ?? {}).map(([ext, id]) => [id, ext]));
    assert.deepEqual(
      shown(
        await meetings(t, b.s.workspaceId),
        (id) => bName.get(id),
        (m) => m.id,
      ),
      shown(
        await meetings(t, a.workspaceId),
        (id) => aName.get(id),
        (m) => b.ids.meeting?.[m.externalId ?? m.id],
      ),
    );
    assert.equal((await meetings(t, b.s.workspaceId)).filter((m) => m.relationships.$transcript?.values.length === 1).length, 2);
    // A purpose is never returned: its effect is. Each copy is taken as a transcript exactly when its original is.
    const aFiles = { [call1]: call1, [plain]: plain, [mail]: mail, [known]: known, 'f-call': aIds.file?.['f-call'] as string };
    const taken = { a: {} as Record<string, boolean>, b: {} as Record<string, boolean> };
    for (const [name, id] of Object.entries(aFiles)) {
      taken.a[name] = await takenAsTranscript(t, a, id);
      taken.b[name] = await takenAsTranscript(t, b.s, b.ids.file?.[name] as string);
    }
    assert.deepEqual(taken.a, { [call1]: true, [plain]: false, [mail]: false, [known]: false, 'f-call': true });
    assert.deepEqual(taken.b, taken.a);
    // Without --files: no file, no purpose, no transcript; the import then makes meetings without one.
    const bare = await exportTo(t, a.workspaceId, 'bare', false);
    assert.ok(!bare.lines.some((l) => l.object === 'file' || l.relationships?.$transcript !== undefined));
    const c = await importInto(t, bare.file);
    assert.equal(c.ids.file, undefined);
    assert.ok((await meetings(t, c.s.workspaceId)).every((m) => m.relationships.$transcript?.values.length === 0));
  });
});
