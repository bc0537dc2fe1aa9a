// The limits of a send that keep a sent e-mail exportable and deliverable (docs/emails.md
// §Sending), on both databases: a subject of white space and invisible characters alone is
// refused as a record's required text is; a subject is at most 10,000 characters (counted in code
// points), the import's limit, so an export of sent mail imports; and the attachments together
// are at most 25 MiB, refused before anything is queued.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { type EmailWorld, importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { assertError } from '../helpers/files.ts';

const MiB = 1024 * 1024;
const send = (t: TestApp, key: string, body: unknown) => call(t, key, 'POST', '/v1/emails/send', body);
const draft = (t: TestApp, key: string, body: unknown) => call(t, key, 'POST', '/v1/emails/draft', body);

async function stored(t: TestApp, w: EmailWorld) {
  const db = t.deps.db.kysely as any;
  const count = async (table: string) => (await db.selectFrom(table).selectAll().where('workspace_id', '=', w.workspaceId).execute()).length;
  return { emails: await count('emails'), outbox: await count('email_outbox'), drafts: await count('email_drafts') };
}

eachDialect('e-mail send limits', (ctx) => {
  let w: EmailWorld;
  test('seed', async () => {
    w = await seedEmailWorld(ctx(), { bigFiles: true });
  });

  test('a subject of white space and invisible characters alone is 400 invalid_value naming subject; one with text is kept as written', async () => {
    const t = ctx();
    const before = await stored(t, w);
    // White space and invisible characters alone (docs/records.md §Writing fields) show nothing.
    for (const subject of [' ', '   ', '\t\n', '\u00a0\u3000', '\u200B', ' \u2060\u200B ', '\u3164']) {
      const r = await send(t, w.keys.ann, sendBody(w.addresses.full, { subject }));
      const error = assertError(r, 400, 'invalid_value', 'subject');
      assert.match(error.message, /subject/);
    }
    // Checked with the body's shape, before the key and the mailbox.
    assertError(await send(t, w.keys.workspace, sendBody('nobody@acme.test', { subject: ' ' })), 400, 'invalid_value', 'subject');
    assert.deepEqual(await stored(t, w), before, 'nothing refused was stored or queued');
    const kept = await send(t, w.keys.ann, sendBody(w.addresses.full, { subject: '  Hello there ' }));
    assert.equal(kept.statusCode, 200, kept.body);
    const list = (await call(t, w.keys.ann, 'GET', '/v1/emails')).json();
    assert.ok(list.data.some((e: { fields: { $subject: { value: string } } }) => e.fields.$subject.value === '  Hello there '));
    // A draft takes no minimum: a person finishes it.
    assert.equal((await draft(t, w.keys.ann, { from: w.addresses.full, subject: ' ' })).statusCode, 200);
  });

  test('a subject is at most 10,000 characters, as the import takes, so an export of sent mail imports', async () => {
    const t = ctx();
    const before = await stored(t, w);
    const over = '😀'.repeat(10_001);
    for (const op of [send, draft]) {
      const error = assertError(await op(t, w.keys.ann, sendBody(w.addresses.full, { subject: over })), 400, 'invalid_value', 'subject');
      assert.match(error.message, /10000 characters/);
    }
    assert.deepEqual(await stored(t, w), before, 'nothing refused was stored or queued');
    // 10,000 emoji are 20,000 UTF-16 units but 10,000 characters: taken.
    const subject = '😀'.repeat(10_000);
    const res = await send(t, w.keys.ann, sendBody(w.addresses.full, { subject, messageBody: { contentType: 'TEXT', content: '<&>'.repeat(100_000) } }));
    assert.equal(res.statusCode, 200, res.body);

    const file = join(t.tdb.dataDir, `send-limits-${w.tag}.ndjson`);
    assert.equal((await rolodex(t, ['export', '--workspace', w.workspaceId, file])).code, 0);
    const copy = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', copy.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const listed = (await call(t, copy.secret, 'GET', '/v1/emails?limit=25')).json();
    assert.ok(listed.data.some((e: { fields: { $subject: { value: string } } }) => e.fields.$subject.value === subject));
  });

  test('attachments together over 25 MiB are 400 invalid_value naming attachments, before anything is queued', async () => {
    const t = ctx();
    const dir = mkdtempSync(join(tmpdir(), 'rolodex-send-limits-'));
    let five: string;
    let over: string;
    try {
      writeFileSync(join(dir, 'five.bin'), Buffer.alloc(5 * MiB, 1));
      writeFileSync(join(dir, 'over.bin'), Buffer.alloc(5 * MiB + 1, 1));
      const file = (externalId: string, name: string) => ({
        object: 'file',
        externalId,
        source: 'api',
        filename: name,
        mimeType: 'application/octet-stream',
        path: join(dir, name),
      });
      const imported = await importInto(t, w.workspaceId, [file('f-five', 'five.bin'), file('f-over', 'over.bin')]);
      five = imported.ids.file?.['f-five'] as string;
      over = imported.ids.file?.['f-over'] as string;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const before = await stored(t, w);
    for (const op of [send, draft]) {
      // 20 MiB + 5 MiB + 1 byte: each file within its limit, the whole over it.
      const r = await op(t, w.keys.ann, sendBody(w.addresses.full, { attachments: [w.files.small, w.files.edge, over] }));
      const error = assertError(r, 400, 'invalid_value', 'attachments');
      assert.match(error.message, /26,214,400 bytes/);
      // A file's own refusal still names the file.
      assertError(await op(t, w.keys.ann, sendBody(w.addresses.full, { attachments: [w.files.edge, w.files.big] })), 400, 'file_too_large', 'attachments[1]');
    }
    assert.deepEqual(await stored(t, w), before, 'nothing refused was stored or queued');
    // Exactly 25 MiB is taken; a file attached twice counts once.
    const edge = await send(t, w.keys.ann, sendBody(w.addresses.full, { attachments: [w.files.edge, five, w.files.edge] }));
    assert.equal(edge.statusCode, 200, edge.body);
    assert.equal((await draft(t, w.keys.ann, sendBody(w.addresses.full, { attachments: [five, w.files.edge] }))).statusCode, 200);
  });
});
