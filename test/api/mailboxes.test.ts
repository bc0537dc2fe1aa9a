// Mailboxes and imported mail on both databases: `rolodex mailbox add|list|remove` with --json and
// its refusals, the `mailbox` and `email` import kinds (a removed mailbox imported with removedAt;
// errors name the line and field and never repeat a subject or body), and the demo's e-mail lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { ImportFailed } from '../../src/import/run.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { importInto, seedEmailWorld } from '../helpers/emails.ts';

function rolodex(t: TestApp) {
  return async (...args: string[]) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const io: Io = { out: (x) => stdout.push(x), err: (x) => stderr.push(x), env, isTty: false };
    const code = await main(args, io);
    return { code, stdout: stdout.join(''), stderr: stderr.join(''), json: () => JSON.parse(stdout.join('')) };
  };
}

eachDialect('mailboxes', (ctx) => {
  test('rolodex mailbox add, list and remove; the new mailbox sends at once, the removed one no more', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const cli = rolodex(t);
    const added = await cli(
      'mailbox',
      'add',
      '--workspace',
      w.workspaceId,
      '--user',
      'u-bob',
      '--address',
      'Sales@Acme.test',
      '--others-see',
      'METADATA',
      '--json',
    );
    assert.equal(added.code, 0, added.stderr);
    const m = added.json();
    assert.match(m.id, /^mbx_/);
    assert.deepEqual([m.userId, m.address, m.othersSee, m.removedAt], [w.users.bob, 'sales@acme.test', 'METADATA', null]);
    const send = { from: 'SALES@acme.test', to: ['x@example.test'], subject: 'Hi', messageBody: { content: 'x' } };
    assert.equal((await call(t, w.keys.bob, 'POST', '/v1/emails/send', send)).statusCode, 200);
    assert.equal((await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0].accessLevel, 'METADATA');

    const taken = await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', w.users.ann, '--address', 'sales@acme.test');
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /already/);
    assert.ok(!taken.stderr.includes('sales@acme.test'), 'the address is not repeated in the error');
    assert.equal((await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', 'nobody', '--address', 'a@acme.test')).code, 1);
    assert.equal((await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', w.users.ann, '--address', 'Ann <a@acme.test>')).code, 1);
    assert.equal(
      (await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', w.users.ann, '--address', 'a@acme.test', '--others-see', 'NONE')).code,
      2,
    );
    assert.equal((await cli('mailbox', 'add', '--workspace', w.workspaceId, '--address', 'a@acme.test')).code, 2);
    // An externalId the import would refuse would make the workspace's export fail to import.
    for (const ext of ['', 'x'.repeat(256)]) {
      const bad = await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', w.users.ann, '--address', 'a@acme.test', '--external-id', ext);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--external-id must be a string of 1 to 255 characters/);
    }

    const list = await cli('mailbox', 'list', '--workspace', w.workspaceId, '--json');
    assert.equal(list.code, 0);
    assert.deepEqual(
      list
        .json()
        .map((x: { address: string }) => x.address)
        .sort(),
      [w.addresses.full, w.addresses.meta, w.addresses.bob, 'sales@acme.test'].sort(),
    );
    const removed = await cli('mailbox', 'remove', m.id, '--json');
    assert.equal(removed.code, 0, removed.stderr);
    assert.ok(removed.json().removedAt);
    // Removing twice is refused, saying so: the mailbox is there, removed (its mail names it).
    const again = await cli('mailbox', 'remove', m.id);
    assert.equal(again.code, 1, 'removing twice is refused');
    assert.match(again.stderr, new RegExp(`mailbox "${m.id}" is removed already \\(since ${removed.json().removedAt}\\)`), again.stderr);
    assert.match((await cli('mailbox', 'remove', 'mbx_nope')).stderr, /no mailbox with id "mbx_nope"/);
    assert.equal((await call(t, w.keys.bob, 'POST', '/v1/emails/send', send)).json().error.code, 'unknown_mailbox');
    assert.equal((await call(t, w.keys.ann, 'GET', '/v1/emails')).json().totalCount, 1, 'its mail stays');
    assert.ok(!(await cli('mailbox', 'list', '--workspace', w.workspaceId)).stdout.includes('sales@acme.test'));
    // The address is free again.
    assert.equal((await cli('mailbox', 'add', '--workspace', w.workspaceId, '--user', w.users.ann, '--address', 'sales@acme.test')).code, 0);
  });

  test('the mailbox import kind: removedAt imports it removed, freeing its address; a re-import without it brings it back', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const cli = rolodex(t);
    const box = { object: 'mailbox', externalId: 'mb-gone', user: 'u-ann', address: w.addresses.full };
    await assert.rejects(
      importInto(t, w.workspaceId, [{ ...box, removedAt: 'yesterday' }]),
      (err: unknown) => err instanceof ImportFailed && err.message.includes('line 1: removedAt:'),
    );
    // The live mb-full keeps the address; the removed mailbox is not listed.
    const gone = await importInto(t, w.workspaceId, [{ ...box, removedAt: '2026-01-01T00:00:00+01:00' }]);
    const id = gone.ids.mailbox?.['mb-gone'] as string;
    const row = await t.deps.db.kysely.selectFrom('mailboxes').select('removed_at').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.removed_at, '2025-12-31T23:00:00.000Z');
    const listed = async () => (await cli('mailbox', 'list', '--workspace', w.workspaceId, '--json')).json().map((m: { id: string }) => m.id);
    assert.ok(!(await listed()).includes(id));
    await importInto(t, w.workspaceId, [{ ...box, address: 'gone@acme.test' }]);
    assert.ok((await listed()).includes(id));
    // Back and live, it cannot take a live mailbox's address; the error names line and field, never the address.
    await assert.rejects(
      importInto(t, w.workspaceId, [box]),
      (err: unknown) => err instanceof ImportFailed && err.message.includes('line 1: address:') && !err.message.includes(w.addresses.full),
    );
  });

  test('the email import kind: all or nothing, errors name line and field and never the content', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const secret = 'SECRET-SUBJECT-TEXT';
    const good = {
      object: 'email',
      externalId: 'e-1',
      mailbox: 'mb-full',
      fields: {
        $subject: { value: secret, valueType: 'TEXT' },
        $sentAt: { value: '2026-02-01T10:00:00+01:00', valueType: 'DATETIME' },
        $from: { value: 'x@example.test', valueType: 'EMAIL' },
        $to: { value: [w.addresses.full], valueType: 'EMAIL' },
      },
      relationships: { $attachment: { objectType: 'file', values: ['f-small'] } },
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, mailbox: 'mb-nope' }, 'mailbox'],
      [{ ...good, fields: { ...good.fields, $to: { value: [secret], valueType: 'EMAIL' } } }, 'fields.$to.value[0]'],
      [{ ...good, fields: { ...good.fields, $sentAt: { value: 'yesterday', valueType: 'DATETIME' } } }, 'fields.$sentAt.value'],
      [{ ...good, fields: { ...good.fields, $priority: { value: 1, valueType: 'NUMBER' } } }, 'fields.$priority'],
      [{ ...good, relationships: { $attachment: { values: ['f-nope'] } } }, 'relationships.$attachment.values[0]'],
    ];
    for (const [object, field] of cases) {
      await assert.rejects(
        importInto(t, w.workspaceId, [object]),
        (err: unknown) => err instanceof ImportFailed && err.message.includes(`line 1: ${field}:`) && !err.message.includes(secret),
        field,
      );
    }
    assert.equal((await call(t, w.keys.ann, 'GET', '/v1/emails')).json().totalCount, 0, 'nothing was imported');
    const ok = await importInto(t, w.workspaceId, [good]);
    const one = (await call(t, w.keys.ann, 'GET', `/v1/emails/${ok.ids.email?.['e-1']}`)).json();
    assert.equal(one.externalId, 'e-1');
    assert.equal(one.fields.$sentAt.value, '2026-02-01T09:00:00.000Z');
    assert.deepEqual(one.fields.$body, { value: '', valueType: 'HTML' });
    assert.deepEqual(one.relationships.$attachment.values, [w.files.small]);
    // Re-imported: updated in place, never delivered; an empty $attachment removes the attachments.
    const again = await importInto(t, w.workspaceId, [
      { ...good, fields: { ...good.fields, $body: { value: 'a\nb', valueType: 'TEXT' } }, relationships: { $attachment: { values: [] } } },
    ]);
    assert.equal(again.ids.email?.['e-1'], ok.ids.email?.['e-1']);
    const updated = (await call(t, w.keys.ann, 'GET', `/v1/emails/${one.id}`)).json();
    assert.equal(updated.fields.$body.value, 'a<br>\nb');
    assert.deepEqual(updated.relationships.$attachment.values, []);
    const outbox = await t.deps.db.kysely.selectFrom('email_outbox').selectAll().where('workspace_id', '=', w.workspaceId).execute();
    assert.deepEqual(outbox, []);
  });

  test('rolodex demo has mailboxes and mail, and prints a send that works', async () => {
    const t = ctx();
    const cli = rolodex(t);
    const demo = await cli('demo', '--json');
    assert.equal(demo.code, 0, demo.stderr);
    const out = demo.json();
    assert.equal(out.counts.mailbox, 2);
    assert.equal(out.counts.email, 2);
    // Another demo workspace, as a person sees it: its printed admin key and send line.
    const human = await cli('demo');
    // Its first line counts what it made, each kind in words.
    assert.match(human.stdout, /^demo workspace ws_\w+ \(Acme \(demo\)\): 2 users, .*1 opportunity, .*2 mailboxes, 2 emails\n/);
    const line = human.stdout.split('\n').find((l) => l.includes('/v1/emails/send'));
    assert.ok(line, 'a send line is printed');
    const body = JSON.parse(/-d '([^']+)'/.exec(line)![1]!);
    const admin = /^\s+admin\s+(\S+)/m.exec(human.stdout)![1]!;
    const member = /^\s+member\s+(\S+)/m.exec(human.stdout)![1]!;
    const res = await call(t, admin, 'POST', '/v1/emails/send', body);
    assert.equal(res.statusCode, 200, res.body);
    const emails = (await call(t, member, 'GET', '/v1/emails')).json();
    assert.equal(emails.totalCount, 3);
    assert.deepEqual(
      emails.data.map((e: { accessLevel: string }) => e.accessLevel),
      ['FULL', 'FULL', 'FULL'],
      "Bob reads his own mailbox's mail and Ann's at FULL",
    );
    const ann = (await call(t, admin, 'GET', '/v1/emails')).json();
    assert.deepEqual(
      ann.data.map((e: { accessLevel: string }) => e.accessLevel),
      ['FULL', 'METADATA', 'FULL'],
    );
  });
});
