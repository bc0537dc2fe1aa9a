// A re-import line equal to what a channel, message or e-mail holds changes nothing, updatedAt
// included; a line that changes any of it (a name, the visibility, the $files or $attachment)
// moves updatedAt (docs/messages.md §Import, docs/emails.md §Import). The same of a mailbox, whose
// updated_at the API does not show, and of a file: the same bytes under the same description
// leave its row as it was, and the copy the import made of them goes to the sweeper.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { call, eachDialect, keyFor, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { importInto, seedEmailWorld } from '../helpers/emails.ts';

const channel = (name: string, visibility: string) => ({ object: 'channel', externalId: 'ch', provider: 'slack', name, visibility, members: ['u-ann'] });

const message = (files: string[]) => ({
  object: 'message',
  externalId: 'm',
  channel: 'ch',
  fields: {
    $text: { value: 'Hello', valueType: 'TEXT' },
    $sentAt: { value: '2026-03-01T09:00:00Z', valueType: 'DATETIME' },
    $provider: { value: 'slack', valueType: 'TEXT' },
  },
  relationships: { $files: { objectType: 'file', values: files } },
});

const email = (files: string[]) => ({
  object: 'email',
  externalId: 'e',
  mailbox: 'mb-full',
  fields: {
    $subject: { value: 'Renewal', valueType: 'TEXT' },
    $body: { value: 'a < b', valueType: 'TEXT' },
    $sentAt: { value: '2026-03-01T09:00:00+01:00', valueType: 'DATETIME' },
    $from: { value: 'buyer@globex.test', valueType: 'EMAIL' },
    $to: { value: ['ann@acme.test'], valueType: 'EMAIL' },
  },
  relationships: { $attachment: { objectType: 'file', values: files } },
});

/** `rolodex export` without `--files`, imported into the workspace it came from. */
async function exportedAndImportedAgain(t: TestApp, workspaceId: string, name: string): Promise<void> {
  const path = join(t.tdb.dataDir, `${name}.ndjson`);
  const exported = await rolodex(t, ['export', '--workspace', workspaceId, path]);
  assert.equal(exported.code, 0, exported.err);
  const imported = await rolodex(t, ['import', '--workspace', workspaceId, path]);
  assert.equal(imported.code, 0, imported.err);
}

eachDialect('re-import of channels, messages and e-mails', (ctx) => {
  test('a line that changes nothing leaves updatedAt alone; a change moves it', async () => {
    const t: TestApp = ctx();
    const w = await seedEmailWorld(t);
    const key = await keyFor(t, w.workspaceId, w.users.ann, null);
    const first = await importInto(t, w.workspaceId, [channel('general', 'public'), message(['f-small']), email(['f-small'])]);
    const urls = [`/v1/channels/${first.ids.channel?.ch}`, `/v1/messages/${first.ids.message?.m}`, `/v1/emails/${first.ids.email?.e}`];
    const updatedAt = async () =>
      Promise.all(
        urls.map(async (url) => {
          const res = await call(t, key, 'GET', url);
          assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
          return res.json().updatedAt as string;
        }),
      );
    const created = await updatedAt();

    await sleep(5);
    await importInto(t, w.workspaceId, [channel('general', 'public'), message(['f-small']), email(['f-small'])]);
    assert.deepEqual(await updatedAt(), created, 'an unchanged line moves no updatedAt');

    // Only the $files and $attachment change: the message and e-mail are changed, the channel is not.
    await sleep(5);
    await importInto(t, w.workspaceId, [channel('general', 'public'), message([]), email(['f-small', 'f-second'])]);
    const [chn, msg, eml] = await updatedAt();
    assert.equal(chn, created[0]);
    assert.ok(msg! > created[1]! && eml! > created[2]!, `${msg} ${eml} after ${created.join(' ')}`);

    // The visibility alone, then the name alone, each move the channel's updatedAt.
    await sleep(5);
    await importInto(t, w.workspaceId, [channel('general', 'restricted')]);
    const [restricted] = await updatedAt();
    assert.ok(restricted! > chn!, `${restricted} after ${chn}`);
    await sleep(5);
    await importInto(t, w.workspaceId, [channel('all-hands', 'restricted')]);
    const [renamed] = await updatedAt();
    assert.ok(renamed! > restricted!, `${renamed} after ${restricted}`);
  });

  // An export without --files writes no $attachment (docs/import.md §Export), and imported into its
  // own workspace it changes nothing (docs/emails.md §Import).
  test("an e-mail line that names no $attachment keeps the e-mail's; an empty one removes them", async () => {
    const t: TestApp = ctx();
    const w = await seedEmailWorld(t);
    const key = await keyFor(t, w.workspaceId, w.users.ann, null);
    const first = await importInto(t, w.workspaceId, [email(['f-small', 'f-second'])]);
    const url = `/v1/emails/${first.ids.email?.e}`;
    const read = async () => {
      const res = await call(t, key, 'GET', url);
      assert.equal(res.statusCode, 200, res.body);
      return { updatedAt: res.json().updatedAt as string, files: res.json().relationships.$attachment.values as string[] };
    };
    const before = await read();
    assert.equal(before.files.length, 2);

    await sleep(5);
    const { relationships: _, ...named } = email([]);
    await importInto(t, w.workspaceId, [named]);
    assert.deepEqual(await read(), before);

    await exportedAndImportedAgain(t, w.workspaceId, `no-files-${w.tag}`);
    assert.deepEqual(await read(), before, 'an export without --files imported into its workspace keeps the attachments');

    await sleep(5);
    await importInto(t, w.workspaceId, [email([])]);
    const cleared = await read();
    assert.deepEqual(cleared.files, []);
    assert.ok(cleared.updatedAt > before.updatedAt, `${cleared.updatedAt} after ${before.updatedAt}`);
  });

  test('a message or record line that names no $files keeps them; an empty one removes them', async () => {
    const t: TestApp = ctx();
    const w = await seedEmailWorld(t);
    const key = await keyFor(t, w.workspaceId, w.users.ann, null);
    const contact = (files?: string[]) => ({
      object: 'contact',
      externalId: 'c-1',
      fields: { $name: { value: { firstName: 'Ann' }, valueType: 'FULL_NAME' } },
      relationships: files === undefined ? {} : { $files: { objectType: 'file', values: files } },
    });
    const first = await importInto(t, w.workspaceId, [channel('general', 'public'), message(['f-small', 'f-second']), contact(['f-second'])]);
    const urls = [`/v1/messages/${first.ids.message?.m}`, `/v1/contacts/${first.ids.contact?.['c-1']}`];
    const read = async () =>
      Promise.all(
        urls.map(async (url) => {
          const res = await call(t, key, 'GET', url);
          assert.equal(res.statusCode, 200, res.body);
          return res.json().relationships.$files.values as string[];
        }),
      );
    const before = await read();
    assert.deepEqual(
      before.map((f) => f.length),
      [2, 1],
    );

    const { relationships: _, ...named } = message([]);
    await importInto(t, w.workspaceId, [named, contact()]);
    assert.deepEqual(await read(), before);

    await exportedAndImportedAgain(t, w.workspaceId, `no-files-${w.tag}`);
    assert.deepEqual(await read(), before, 'an export without --files imported into its workspace keeps the files');

    await importInto(t, w.workspaceId, [message([]), contact([])]);
    assert.deepEqual(await read(), [[], []]);
  });

  // A mailbox line moved its updated_at, and a file line copied the same bytes in under a new
  // blob, although neither changed anything.
  test('a mailbox or file line that changes nothing writes nothing; a change writes it', async () => {
    const t: TestApp = ctx();
    const w = await seedEmailWorld(t);
    const dir = mkdtempSync(join(tmpdir(), 'rolodex-unchanged-'));
    try {
      writeFileSync(join(dir, 'a.txt'), 'the same bytes\n');
      writeFileSync(join(dir, 'b.txt'), 'other bytes\n');
      const box = (othersSee: string) => ({ object: 'mailbox', externalId: 'mb-x', user: 'u-ann', address: 'x@acme.test', othersSee });
      const removed = { object: 'mailbox', externalId: 'mb-gone', user: 'u-bob', address: 'gone@acme.test', removedAt: '2026-01-01T00:00:00Z' };
      const file = (name: string) => ({ object: 'file', externalId: 'f-x', source: 'api', filename: 'x.txt', mimeType: 'text/plain', path: join(dir, name) });
      const first = await importInto(t, w.workspaceId, [box('METADATA'), removed, file('a.txt')]);
      const db = t.deps.db.kysely;
      const mailbox = (externalId: string) =>
        db
          .selectFrom('mailboxes')
          .selectAll()
          .where('id', '=', first.ids.mailbox?.[externalId] as string)
          .executeTakeFirstOrThrow();
      const fileRow = () =>
        db
          .selectFrom('files')
          .selectAll()
          .where('id', '=', first.ids.file?.['f-x'] as string)
          .executeTakeFirstOrThrow();
      const key = await keyFor(t, w.workspaceId, w.users.ann, null);
      const shown = async () => (await call(t, key, 'GET', `/v1/files/${first.ids.file?.['f-x']}`)).json<unknown>();
      const before = { box: await mailbox('mb-x'), removed: await mailbox('mb-gone'), file: await fileRow(), shown: await shown() };

      await sleep(5);
      await importInto(t, w.workspaceId, [box('METADATA'), removed, file('a.txt')]);
      assert.deepEqual({ box: await mailbox('mb-x'), removed: await mailbox('mb-gone'), file: await fileRow(), shown: await shown() }, before);
      // The bytes copied in again are no file's: the sweeper deletes them.
      const garbage = (await db.selectFrom('blob_garbage').select('blob_key').execute()).map((g) => g.blob_key);
      assert.ok(
        garbage.some((k) => k.startsWith(`${w.workspaceId}/import-`) && k !== before.file.blob_key),
        garbage.join(' '),
      );

      await sleep(5);
      await importInto(t, w.workspaceId, [box('FULL'), file('b.txt')]);
      const [changed, replaced] = [await mailbox('mb-x'), await fileRow()];
      assert.equal(changed.others_see, 'FULL');
      assert.ok(changed.updated_at > before.box.updated_at, `${changed.updated_at} after ${before.box.updated_at}`);
      assert.notEqual(replaced.blob_key, before.file.blob_key);
      assert.equal(Number(replaced.size_bytes), 'other bytes\n'.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
