// `rolodex export` imported into the workspace it was made from (docs/import.md §Export, §Rules,
// Upsert by externalId): the objects made through the API and the CLI, which have no externalId,
// are written under their server ids, and the import finds them by those ids. So it refuses no
// user's e-mail address, adds no record, list, meeting, channel, mailbox, file, message or e-mail,
// and changes nothing: every listing, its totalCount and every object read the same, no event is
// appended, every row the database holds reads the same (a mailbox's updated_at moved, and a
// file's unchanged bytes were copied in again under a new blob), and the workspace exports the
// same file again. A line changed in the file updates the
// object it names in place, which keeps no externalId.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { meetingBody, transcript } from '../helpers/meetings.ts';

const LISTINGS = [
  '/v1/accounts',
  '/v1/contacts',
  '/v1/opportunities',
  '/v1/notes',
  '/v1/tasks',
  '/v1/objects/project',
  '/v1/lists',
  '/v1/meetings',
  '/v1/members',
  '/v1/files',
  '/v1/channels',
  '/v1/messages',
  '/v1/emails',
];

async function ok<T = Record<string, unknown>>(t: TestApp, secret: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  const r = await call(t, secret, method, url, body);
  assert.equal(r.statusCode, 200, `${method} ${url}: ${r.body}`);
  return r.json<T>();
}

/** Every listing of the workspace as the API answers it (all of it: each holds a few objects). */
async function everything(t: TestApp, s: Seeded): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const url of LISTINGS) out[url] = await ok(t, s.secret, 'GET', `${url}?limit=25`);
  return out;
}

async function eventCount(t: TestApp, workspaceId: string): Promise<number> {
  const r = await t.deps.db.kysely
    .selectFrom('events')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Every row of every table of the test's database, as sorted JSON. Left out: the sweeper's queue
 * of blobs no row names (each imported file's copy of its bytes goes there when the file already
 * holds them), and the listings' counters, whose pending deltas fold into their buckets at any
 * time (the listings' totalCount is compared instead).
 */
async function rows(t: TestApp): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await t.deps.db.kysely.introspection.getTables()) {
    if (t.tdb.schema && table.schema !== t.tdb.schema) continue;
    if (['blob_garbage', 'rank_buckets', 'rank_deltas'].includes(table.name)) continue;
    const all = (await t.deps.db.kysely
      .selectFrom(table.name as never)
      .selectAll()
      .execute()) as unknown[];
    out[table.name] = all.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).sort();
  }
  return out;
}

eachDialect('rolodex export imported into its own workspace', (ctx) => {
  test('changes nothing, refuses no user and adds nothing; a changed line updates its object in place', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const ws = a.workspaceId;
    const op = operatorCtx(t.deps.db.kysely, ws);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    await addRelationship(op, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
    await addField(op, { objectType: 'contact', key: 'badge', label: 'Badge', valueType: 'TEXT', unique: true });

    // Objects of the CLI and the API (no externalId), and of an import (externalIds).
    const user = await rolodex(t, ['user', 'create', '--workspace', ws, '--email', 'bo@acme.test', '--name', 'Bo Ray', '--json']);
    assert.equal(user.code, 0, user.err);
    const channel = await rolodex(t, ['channel', 'create', '--workspace', ws, '--provider', 'slack', '--name', 'general', '--visibility', 'public', '--json']);
    assert.equal(channel.code, 0, channel.err);
    const channelId = (JSON.parse(channel.out) as { id: string }).id;
    const mailbox = await rolodex(t, ['mailbox', 'add', '--workspace', ws, '--user', a.userId, '--address', 'sales@acme.test', '--json']);
    assert.equal(mailbox.code, 0, mailbox.err);
    const mailboxId = (JSON.parse(mailbox.out) as { id: string }).id;
    // A removed mailbox (exported with its removedAt) and one of an externalId that others see at METADATA.
    const old = await rolodex(t, ['mailbox', 'add', '--workspace', ws, '--user', a.userId, '--address', 'old@acme.test', '--json']);
    assert.equal((await rolodex(t, ['mailbox', 'remove', (JSON.parse(old.out) as { id: string }).id])).code, 0);
    const meta = ['--address', 'meta@acme.test', '--others-see', 'METADATA', '--external-id', 'mb-meta'];
    assert.equal((await rolodex(t, ['mailbox', 'add', '--workspace', ws, '--user', a.userId, ...meta])).code, 0);
    const acme = await ok<{ id: string }>(t, a.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' }, relationships: { $owner: a.userId } });
    const ann = await ok<{ id: string }>(t, a.secret, 'POST', '/v1/contacts', {
      fields: { $name: { firstName: 'Ann', lastName: 'Lee' }, $email: ['ann@acme.test'], badge: 'B-1' },
      relationships: { $account: acme.id },
    });
    await ok(t, a.secret, 'POST', '/v1/opportunities', {
      fields: { $name: 'Deal', $stage: 'Proposal' },
      relationships: { $account: acme.id, $champion: ann.id },
    });
    await ok(t, a.secret, 'POST', '/v1/notes', { fields: { $title: 'Call', $content: 'Notes' }, relationships: { $account: acme.id } });
    await ok(t, a.secret, 'POST', '/v1/tasks', { fields: { $title: 'Follow up', $status: 'TODO' }, relationships: { $assignedTo: a.userId } });
    await ok(t, a.secret, 'POST', '/v1/objects/project/values', { fields: { name: 'Apollo' }, relationships: { client: acme.id } });
    await ok(t, a.secret, 'POST', '/v1/lists', { fields: { $name: 'Hot', $objectType: 'contact' }, relationships: { $contacts: [ann.id] } });
    const file = await transcript(t, a.secret, 'We agreed.');
    await ok(t, a.secret, 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['ann@acme.test'] }, { relationships: { $transcript: file } }));
    const field = (value: unknown, valueType: string) => ({ value, valueType });
    const sent = { from: 'sales@acme.test', to: ['erin@example.test'], subject: 'Sent', messageBody: { contentType: 'TEXT', content: 'a < b' } };
    await ok(t, a.secret, 'POST', '/v1/emails/send', sent);
    const seed = join(t.tdb.dataDir, 'seed.ndjson');
    const objects = [
      { object: 'contact', externalId: 'c-1', fields: { $name: field({ firstName: 'Cy' }, 'FULL_NAME'), badge: field('B-2', 'TEXT') } },
      {
        object: 'message',
        externalId: 'm-1',
        channel: channelId,
        fields: { $text: field('hello', 'TEXT'), $sentAt: field('2026-03-01T09:00:00Z', 'DATETIME') },
      },
      {
        object: 'email',
        externalId: 'e-1',
        mailbox: mailboxId,
        fields: {
          $subject: field('Hi', 'TEXT'),
          $body: field('Hello', 'TEXT'),
          $sentAt: field('2026-03-01T10:00:00Z', 'DATETIME'),
          $from: field('buyer@globex.test', 'EMAIL'),
          $to: field(['sales@acme.test'], 'EMAIL'),
        },
      },
    ];
    writeFileSync(seed, objects.map((o) => JSON.stringify(o)).join('\n'));
    const imported = await rolodex(t, ['import', '--workspace', ws, seed]);
    assert.equal(imported.code, 0, imported.err);

    const before = await everything(t, a);
    for (const url of LISTINGS) assert.ok((before[url] as { totalCount: number }).totalCount > 0, `${url} holds something`);
    const events = await eventCount(t, ws);
    const path = join(t.tdb.dataDir, 'self.ndjson');
    const again = join(t.tdb.dataDir, 'self-again.ndjson');
    const files = join(t.tdb.dataDir, 'self-files');
    assert.equal((await rolodex(t, ['export', '--workspace', ws, '--files', files, path])).code, 0);

    const stored = await rows(t);
    const im = await rolodex(t, ['import', '--workspace', ws, path, '--json']);
    assert.equal(im.code, 0, im.err);
    const ids = (JSON.parse(im.out) as { ids: Record<string, Record<string, string>> }).ids;
    assert.equal(ids.user?.[a.userId], a.userId, 'the user is found by its id');
    assert.equal(ids.account?.[acme.id], acme.id, 'the account is found by its id');
    const now = await everything(t, a);
    for (const url of LISTINGS) assert.deepEqual(now[url], before[url], url);
    assert.equal(await eventCount(t, ws), events, 'no event: nothing changed');
    const restored = await rows(t);
    assert.ok(stored.mailboxes?.length === 3, 'the mailboxes are compared');
    for (const table of Object.keys(stored)) assert.deepEqual(restored[table], stored[table], `${table}: no row changed`);
    assert.equal((await rolodex(t, ['export', '--workspace', ws, '--files', files, again])).code, 0);
    assert.equal(readFileSync(again, 'utf8'), readFileSync(path, 'utf8'));

    // A line changed in the file updates the object it names, under the same id, with no externalId.
    const changed = readFileSync(path, 'utf8').replace('"Acme"', '"Acme Corp"');
    assert.notEqual(changed, readFileSync(path, 'utf8'));
    writeFileSync(path, changed);
    const re = await rolodex(t, ['import', '--workspace', ws, path]);
    assert.equal(re.code, 0, re.err);
    const account = await ok<{ externalId: string | null; fields: { $name: { value: string } } }>(t, a.secret, 'GET', `/v1/accounts/${acme.id}`);
    assert.equal(account.fields.$name.value, 'Acme Corp');
    assert.equal(account.externalId, null);
    const after = await everything(t, a);
    for (const url of LISTINGS) assert.equal((after[url] as { totalCount: number }).totalCount, (before[url] as { totalCount: number }).totalCount, url);
    assert.equal(await eventCount(t, ws), events + 1, 'one account.updated');
  });
});
