// A re-import line equal to what a channel, message or e-mail holds changes nothing, updatedAt
// included; a line that changes any of it (a name, the visibility, the $files or $attachment)
// moves updatedAt (docs/messages.md §Import, docs/emails.md §Import).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { call, eachDialect, keyFor, type TestApp } from '../helpers/app.ts';
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
});
