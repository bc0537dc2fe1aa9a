// Who may have a file's bytes (docs/files.md §Who downloads the bytes), on both databases: the
// transcript of a private meeting and the attachment of a METADATA mailbox's e-mail are refused to
// a caller who reads every one of their parents at METADATA (another user's key, a workspace key),
// while their metadata stays readable; one parent at FULL is enough; a knowledge_user file's bytes
// are its owner's alone. Linking such bytes to a parent the caller reads at FULL (a meeting's
// transcript, an e-mail's attachment) is refused the same way, so the rule cannot be walked around.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { purge } from '../../src/trash/purge.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { assertError, download, uploadFile } from '../helpers/files.ts';
import { meetingBody, transcript } from '../helpers/meetings.ts';

type Caller = 'ann' | 'bob' | 'workspace';

/** The answer of getFileUrl for each caller: 200, or 403 full_access_required with nothing else. */
async function urlAnswers(t: TestApp, w: EmailWorld, fileId: string): Promise<Record<Caller, number>> {
  const out = {} as Record<Caller, number>;
  for (const caller of ['ann', 'bob', 'workspace'] as const) {
    const res = await call(t, w.keys[caller], 'GET', `/v1/files/${fileId}/url`);
    if (res.statusCode !== 200) {
      const err = assertError(res, 403, 'full_access_required');
      assert.equal(err.param, undefined);
      assert.equal(err.type, 'forbidden');
    }
    out[caller] = res.statusCode;
  }
  return out;
}

async function meeting(t: TestApp, w: EmailWorld, privacy: 'FULL' | 'METADATA' | null, transcriptId: string): Promise<string> {
  const res = await call(
    t,
    w.keys.ann,
    'POST',
    '/v1/meetings',
    meetingBody({ $organizerEmail: w.addresses.full, $privacySetting: privacy }, { relationships: { $transcript: transcriptId } }),
  );
  assert.equal(res.statusCode, 200, res.body);
  return res.json().id;
}

async function send(t: TestApp, w: EmailWorld, from: 'full' | 'meta', attachments: string[]): Promise<void> {
  const res = await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses[from], { attachments }));
  assert.equal(res.statusCode, 200, res.body);
}

/** Imports a COMPLETED file with this externalId (the import's lines name files by it); returns its id. */
async function importFile(t: TestApp, w: EmailWorld, externalId: string, purpose?: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-files-access-'));
  try {
    writeFileSync(join(dir, 'f.txt'), `${externalId} ${w.tag}`);
    const out = await importInto(t, w.workspaceId, [
      { object: 'file', externalId, source: 'api', filename: 'f.txt', mimeType: 'text/plain', path: join(dir, 'f.txt'), ...(purpose ? { purpose } : {}) },
    ]);
    return out.ids.file?.[externalId] as string;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const EVERYONE = { ann: 200, bob: 200, workspace: 200 };
const OWNER_ONLY = { ann: 200, bob: 403, workspace: 403 };

eachDialect('files access', (ctx) => {
  test('a private meeting: its transcript downloads for its participant only; the metadata stays; a privacy change applies at once', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const bytes = `private call ${w.tag}`;
    const file = await transcript(t, w.keys.ann, bytes);
    assert.deepEqual(await urlAnswers(t, w, file), EVERYONE, 'linked to nothing: downloads as before');
    const id = await meeting(t, w, 'METADATA', file);
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY);
    // The file itself is metadata: listed and retrieved for everyone, as the meeting's title is.
    for (const caller of ['bob', 'workspace'] as const) {
      assert.equal((await call(t, w.keys[caller], 'GET', `/v1/files/${file}`)).statusCode, 200);
      const list = (await call(t, w.keys[caller], 'GET', '/v1/files?limit=25')).json();
      assert.ok(list.data.some((f: { id: string }) => f.id === file));
    }
    const url = (await call(t, w.keys.ann, 'GET', `/v1/files/${file}/url`)).json().url;
    assert.equal((await download(t, url)).bytes.toString(), bytes);
    const open = await call(t, w.keys.ann, 'POST', `/v1/meetings/${id}`, { fields: { $privacySetting: 'FULL' } });
    assert.equal(open.statusCode, 200, open.body);
    assert.deepEqual(await urlAnswers(t, w, file), EVERYONE);
  });

  test('an e-mail of a METADATA mailbox: its attachment downloads for the mailbox owner only; a FULL mailbox shares it', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    await send(t, w, 'meta', [w.files.small]);
    assert.deepEqual(await urlAnswers(t, w, w.files.small), OWNER_ONLY);
    await send(t, w, 'full', [w.files.second]);
    assert.deepEqual(await urlAnswers(t, w, w.files.second), EVERYONE);
    // An imported e-mail links its attachment as a sent one does.
    const f = { id: await importFile(t, w, 'f-imported') };
    assert.deepEqual(await urlAnswers(t, w, f.id), EVERYONE);
    await importInto(t, w.workspaceId, [
      {
        object: 'email',
        externalId: `in-${w.tag}`,
        mailbox: 'mb-meta',
        fields: { $sentAt: { value: '2026-01-01T00:00:00Z', valueType: 'DATETIME' }, $from: { value: 'x@example.test', valueType: 'EMAIL' } },
        relationships: { $attachment: { objectType: 'file', values: ['f-imported'] } },
      },
    ]);
    assert.deepEqual(await urlAnswers(t, w, f.id), OWNER_ONLY);
  });

  test('a file held by one parent at FULL and one at METADATA downloads; by METADATA parents only, not', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const file = await transcript(t, w.keys.ann, `shared ${w.tag}`);
    await meeting(t, w, 'METADATA', file);
    await send(t, w, 'meta', [file]);
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY, 'a private meeting and a METADATA e-mail');
    await meeting(t, w, null, file);
    assert.deepEqual(await urlAnswers(t, w, file), EVERYONE, 'and a meeting everyone reads at FULL');
    const other = await transcript(t, w.keys.ann, `other ${w.tag}`);
    await meeting(t, w, 'METADATA', other);
    await send(t, w, 'full', [other]);
    assert.deepEqual(await urlAnswers(t, w, other), EVERYONE, 'a private meeting and an e-mail everyone reads at FULL');
  });

  test("a message's files download for who reads its channel at FULL: a restricted or private channel's members only", async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const ids = {} as Record<'pub' | 'res' | 'prv' | 'both', string>;
    for (const k of Object.keys({ pub: 0, res: 0, prv: 0, both: 0 }) as (keyof typeof ids)[]) ids[k] = await importFile(t, w, `f-${k}`);
    const at = (value: string, valueType: string) => ({ value, valueType });
    const message = (externalId: string, channel: string, files: string[]) => ({
      object: 'message',
      externalId,
      channel,
      fields: { $text: at(externalId, 'TEXT'), $sentAt: at('2026-03-01T09:00:00.000Z', 'DATETIME') },
      relationships: { $files: { objectType: 'file', values: files } },
    });
    await importInto(t, w.workspaceId, [
      { object: 'channel', externalId: 'ch-pub', provider: 'slack', name: 'general', visibility: 'public', members: [] },
      { object: 'channel', externalId: 'ch-res', provider: 'slack', name: 'deals', visibility: 'restricted', members: ['u-ann'] },
      { object: 'channel', externalId: 'ch-prv', provider: 'slack', name: 'board', visibility: 'private', members: ['u-ann'] },
      message('m-pub', 'ch-pub', ['f-pub', 'f-both']),
      message('m-res', 'ch-res', ['f-res']),
      message('m-prv', 'ch-prv', ['f-prv', 'f-both']),
    ]);
    assert.deepEqual(await urlAnswers(t, w, ids.pub), EVERYONE);
    assert.deepEqual(await urlAnswers(t, w, ids.res), OWNER_ONLY, 'bob (an admin) and a workspace key read a restricted channel at METADATA');
    assert.deepEqual(await urlAnswers(t, w, ids.prv), OWNER_ONLY, 'a private channel is not even visible to them');
    assert.deepEqual(await urlAnswers(t, w, ids.both), EVERYONE, 'one message read at FULL is enough');
    // As GET /v1/messages decides: bob sees the public and the restricted message, not the private one.
    assert.equal((await call(t, w.keys.bob, 'GET', '/v1/messages?limit=25')).json().data.length, 2);
    // A membership change applies to the next request.
    await importInto(t, w.workspaceId, [
      { object: 'channel', externalId: 'ch-res', provider: 'slack', name: 'deals', visibility: 'restricted', members: ['u-ann', 'u-bob'] },
    ]);
    assert.deepEqual(await urlAnswers(t, w, ids.res), { ann: 200, bob: 200, workspace: 403 });
  });

  test("a meeting in the trash keeps its transcript's bytes to who read it at FULL, through restore; a purge leaves the file linked to nothing", async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const db = t.deps.db.kysely;
    const file = await transcript(t, w.keys.ann, `trashed call ${w.tag}`);
    const id = await meeting(t, w, 'METADATA', file);
    const open = await transcript(t, w.keys.ann, `open call ${w.tag}`);
    const openId = await meeting(t, w, null, open);
    for (const [m, f] of [
      [id, file],
      [openId, open],
    ]) {
      const del = await call(t, w.keys.ann, 'DELETE', `/v1/meetings/${m}`);
      assert.equal(del.statusCode, 200, del.body);
      assert.equal((await call(t, w.keys.ann, 'GET', `/v1/meetings/${m}`)).statusCode, 404);
      assert.equal((await call(t, w.keys.ann, 'GET', `/v1/files/${f}`)).statusCode, 200);
    }
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY, 'in the trash: still its participant only');
    assert.deepEqual(await urlAnswers(t, w, open), EVERYONE, 'a meeting everyone read at FULL shares it in the trash too');
    // Nor can it be linked to a meeting the caller reads at FULL meanwhile.
    const link = await call(t, w.keys.bob, 'POST', '/v1/meetings', meetingBody({}, { relationships: { $transcript: file } }));
    assertError(link, 403, 'full_access_required', 'relationships.$transcript');
    await write(db, (tx) => restore(operatorCtx(tx, w.workspaceId), { id }));
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY, 'restored: the live meeting decides again');
    const open2 = await call(t, w.keys.ann, 'POST', `/v1/meetings/${id}`, { fields: { $privacySetting: 'FULL' } });
    assert.equal(open2.statusCode, 200, open2.body);
    assert.deepEqual(await urlAnswers(t, w, file), EVERYONE, 'no row of the trash outlives the restore');
    await call(t, w.keys.ann, 'POST', `/v1/meetings/${id}`, { fields: { $privacySetting: 'METADATA' } });
    assert.equal((await call(t, w.keys.ann, 'DELETE', `/v1/meetings/${id}`)).statusCode, 200);
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY);
    await write(db, (tx) => purge(operatorCtx(tx, w.workspaceId), { ids: [id, openId] }));
    for (const table of ['trash_transcripts', 'trash_participants'] as const) {
      const key = table === 'trash_transcripts' ? 'id' : 'meeting_id';
      assert.deepEqual(await db.selectFrom(table).select(key).where(key, 'in', [id, openId]).execute(), [], `the purge erases ${table}`);
    }
    assert.deepEqual(await urlAnswers(t, w, file), EVERYONE, 'purged: the file is linked to nothing, as a replaced transcript is');
  });

  test("knowledge_user bytes are their owner's: another user's key and a workspace key are refused, knowledge_workspace is everyone's", async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const own = await uploadFile(t, w.keys.ann, Buffer.from('my notes'), { filename: 'mine.txt', mimeType: 'text/plain', purpose: 'knowledge_user' });
    assert.deepEqual(await urlAnswers(t, w, own.id), OWNER_ONLY);
    const res = await call(t, w.keys.bob, 'GET', `/v1/files/${own.id}/url`);
    assert.match(res.json().error.message, /another user's Knowledge/);
    // bob is an admin: no exception, as for a private meeting.
    const shared = await uploadFile(t, w.keys.bob, Buffer.from('policy'), { filename: 'policy.txt', mimeType: 'text/plain', purpose: 'knowledge_workspace' });
    assert.deepEqual(await urlAnswers(t, w, shared.id), EVERYONE);
    // Still the owner's when the owner attaches the file to mail others read at FULL.
    await send(t, w, 'full', [own.id]);
    assert.deepEqual(await urlAnswers(t, w, own.id), OWNER_ONLY);
  });

  test('bytes a caller may not have cannot be linked to a meeting or e-mail it reads at FULL', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const file = await transcript(t, w.keys.ann, `secret ${w.tag}`);
    await meeting(t, w, 'METADATA', file);
    await send(t, w, 'meta', [w.files.small]);
    const before = (await call(t, w.keys.bob, 'GET', '/v1/meetings')).json().totalCount;

    const create = await call(t, w.keys.bob, 'POST', '/v1/meetings', meetingBody({}, { relationships: { $transcript: [file] } }));
    assertError(create, 403, 'full_access_required', 'relationships.$transcript[0]');
    const mine = await call(t, w.keys.bob, 'POST', '/v1/meetings', meetingBody({ $organizerEmail: w.addresses.bob }));
    assert.equal(mine.statusCode, 200, mine.body);
    const update = await call(t, w.keys.bob, 'POST', `/v1/meetings/${mine.json().id}`, { relationships: { $transcript: { replace: file } } });
    assertError(update, 403, 'full_access_required', 'relationships.$transcript.replace');
    assert.deepEqual(mine.json().relationships.$transcript.values, []);
    assert.deepEqual((await call(t, w.keys.bob, 'GET', `/v1/meetings/${mine.json().id}`)).json().relationships.$transcript.values, []);
    assert.equal((await call(t, w.keys.bob, 'GET', '/v1/meetings')).json().totalCount, before + 1, 'the refused create made nothing');

    for (const op of ['send', 'draft']) {
      const res = await call(t, w.keys.bob, 'POST', `/v1/emails/${op}`, sendBody(w.addresses.bob, { attachments: [w.files.second, w.files.small] }));
      assertError(res, 403, 'full_access_required', 'attachments[1]');
      const knowledge = await uploadFile(t, w.keys.ann, Buffer.from('k'), { filename: 'k.txt', mimeType: 'text/plain', purpose: 'knowledge_user' });
      const other = await call(t, w.keys.bob, 'POST', `/v1/emails/${op}`, sendBody(w.addresses.bob, { attachments: [knowledge.id] }));
      assertError(other, 403, 'full_access_required', 'attachments[0]');
    }
    assert.deepEqual(await urlAnswers(t, w, file), OWNER_ONLY);
    assert.deepEqual(await urlAnswers(t, w, w.files.small), OWNER_ONLY);
    // The owner may link its own bytes anywhere: then they are shared with whoever reads that at FULL.
    const shared = await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.full, { attachments: [w.files.small] }));
    assert.equal(shared.statusCode, 200, shared.body);
    assert.deepEqual(await urlAnswers(t, w, w.files.small), EVERYONE);
  });

  test('a transcript moved between private meetings by updates and imports is never handed out meanwhile', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const x = await importFile(t, w, 'f-x', 'meeting_transcript');
    const y = await importFile(t, w, 'f-y', 'meeting_transcript');
    const z = await transcript(t, w.keys.ann, `z ${w.tag}`);
    const ext = (file: string) => (file === x ? 'f-x' : 'f-y');
    const line = (externalId: string, file: string) => ({
      object: 'meeting',
      externalId,
      fields: {
        $title: { value: externalId, valueType: 'TEXT' },
        $startDate: { value: '2026-01-01T09:00:00Z', valueType: 'DATETIME' },
        $endDate: { value: '2026-01-01T10:00:00Z', valueType: 'DATETIME' },
        $organizerEmail: { value: w.addresses.full, valueType: 'EMAIL' },
        $privacySetting: { value: 'METADATA', valueType: 'TEXT' },
      },
      relationships: { $transcript: { objectType: 'file', values: [ext(file)] } },
    });
    // x and y always belong to one of the two private meetings: each import moves both at once.
    await importInto(t, w.workspaceId, [line('m-1', x), line('m-2', y)]);
    const private3 = await meeting(t, w, 'METADATA', z);
    let stop = false;
    const writer = (async () => {
      try {
        for (let i = 0; i < 12; i++) {
          await importInto(t, w.workspaceId, i % 2 === 0 ? [line('m-1', y), line('m-2', x)] : [line('m-1', x), line('m-2', y)]);
          // z moves away from the third private meeting and back: refused before and after, allowed between.
          const res = await call(t, w.keys.ann, 'POST', `/v1/meetings/${private3}`, { relationships: { $transcript: { replace: i % 2 === 0 ? x : z } } });
          assert.equal(res.statusCode, 200, res.body);
        }
      } finally {
        stop = true;
      }
    })();
    let asked = 0;
    const reader = (async () => {
      while (!stop) {
        // A turn of the event loop between rounds: on SQLite the writer shares this process.
        await new Promise((resolve) => setImmediate(resolve));
        for (const file of [x, y]) {
          const res = await call(t, w.keys.bob, 'GET', `/v1/files/${file}/url`);
          assertError(res, 403, 'full_access_required');
          asked++;
        }
        const zRes = await call(t, w.keys.workspace, 'GET', `/v1/files/${z}/url`);
        assert.ok(zRes.statusCode === 200 || zRes.statusCode === 403, zRes.body);
      }
    })();
    await Promise.all([writer, reader]);
    assert.ok(asked > 0);
    console.log(`# ${t.dialect}: ${asked} refused reads beside the moves`);
    assert.deepEqual(await urlAnswers(t, w, z), OWNER_ONLY);
  });
});
