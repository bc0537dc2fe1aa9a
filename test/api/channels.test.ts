// Channels and messages through `rolodex import` and `rolodex channel …`: validation naming line
// and field (never echoing text), re-import updating in place with counts kept, CLI changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { ImportFailed } from '../../src/import/run.ts';
import { call, eachDialect, keyFor, type TestApp } from '../helpers/app.ts';
import { importObjects, message, seedPeople } from '../helpers/messages.ts';
import { createUser } from '../../src/users/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';

function cli(t: TestApp) {
  return async (...argv: string[]) => {
    let out = '';
    let err = '';
    const io: Io = {
      out: (s) => void (out += s),
      err: (s) => void (err += s),
      env: { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}), LOG_LEVEL: 'silent' },
      isTty: false,
    };
    const code = await main(argv, io);
    return { code, out, err };
  };
}

async function counts(t: TestApp, workspaceId: string) {
  const rows = await t.deps.db.kysely.selectFrom('channels').select(['external_id', 'message_count']).where('workspace_id', '=', workspaceId).execute();
  return Object.fromEntries(rows.map((r) => [r.external_id, Number(r.message_count)]));
}

eachDialect('channels and message import', (ctx) => {
  test('bad objects are refused naming line and field, nothing written, no text echoed', async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const secret = 'SECRET-TEXT-42';
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'secret', members: [] }, /line 2: visibility/],
      [{ object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'public', members: ['u-nobody'] }, /line 2: members\[0\]: no user/],
      [message('m', 'nope', '2026-03-01T00:00:00Z', secret), /line 2: channel: no channel/],
      [message('m', 'c0', 'yesterday', secret), /line 2: fields\.\$sentAt\.value/],
      [
        {
          ...message('m', 'c0', '2026-03-01T00:00:00Z', secret),
          fields: { $text: { value: secret, valueType: 'MARKDOWN' }, $sentAt: { value: '2026-03-01T00:00:00Z' } },
        },
        /fields\.\$text\.valueType/,
      ],
      [
        { ...message('m', 'c0', '2026-03-01T00:00:00Z', secret), fields: { $text: { value: 7 }, $sentAt: { value: '2026-03-01T00:00:00Z' } } },
        /fields\.\$text\.value/,
      ],
      [{ ...message('m', 'c0', '2026-03-01T00:00:00Z', secret), colour: 'red' }, /line 2: colour/],
      // A provider is named or left out (null: the channel's), never empty.
      ...['', '  '].map((value): [Record<string, unknown>, RegExp] => [
        message('m', 'c0', '2026-03-01T00:00:00Z', secret, { $provider: { value, valueType: 'TEXT' } }),
        /line 2: fields\.\$provider\.value: must name the chat provider/,
      ]),
      [
        { ...message('m', 'c0', '2026-03-01T00:00:00Z', secret), relationships: { $files: { objectType: 'file', values: ['f-1'] } } },
        /relationships\.\$files\.values\[0\]: no COMPLETED file/,
      ],
    ];
    for (const [obj, expected] of cases) {
      const channel = { object: 'channel', externalId: 'c0', provider: 'slack', name: 'c0', visibility: 'public', members: [] };
      await assert.rejects(importObjects(t, workspaceId, [channel, obj]), (err: unknown) => {
        assert.ok(err instanceof ImportFailed, String(err));
        assert.match(err.message, expected);
        assert.ok(!err.message.includes(secret), 'the error repeats message text');
        return true;
      });
    }
    assert.deepEqual(await counts(t, workspaceId), {}, 'a failed import wrote nothing');
  });

  test('re-import updates in place, moves messages between channels and keeps counts', async () => {
    const t = ctx();
    const { workspaceId, callers } = await seedPeople(t);
    const chans = [
      { object: 'channel', externalId: 'a', provider: 'slack', name: 'a', visibility: 'public', members: ['u-alice'] },
      { object: 'channel', externalId: 'b', provider: 'slack', name: 'b', visibility: 'private', members: ['u-alice'] },
    ];
    const first = await importObjects(t, workspaceId, [
      ...chans,
      message('m1', 'a', '2026-03-01T00:00:00Z', 'one'),
      message('m2', 'a', '2026-03-02T00:00:00Z', 'two'),
    ]);
    assert.deepEqual(await counts(t, workspaceId), { a: 2, b: 0 });
    const bob = callers[1]!.secret;
    assert.equal((await call(t, bob, 'GET', '/v1/messages')).json().totalCount, 2);
    // m2 moves to the private channel, m1 is edited, m3 is new; the channel b now includes bob.
    const second = await importObjects(t, workspaceId, [
      message('m2', 'b', '2026-03-02T00:00:00Z', 'two'),
      message('m1', 'a', '2026-03-01T00:00:00Z', 'one, edited', { $editedAt: { value: '2026-03-03T00:00:00Z', valueType: 'DATETIME' } }),
      message('m3', 'b', '2026-03-04T00:00:00Z', 'three'),
    ]);
    assert.equal(second.ids.message?.m1, first.ids.message?.m1);
    assert.deepEqual(await counts(t, workspaceId), { a: 1, b: 2 });
    const bobList = (await call(t, bob, 'GET', '/v1/messages')).json();
    assert.equal(bobList.totalCount, 1);
    assert.deepEqual(bobList.data[0].fields.$text.value, 'one, edited');
    assert.equal(bobList.data[0].fields.$editedAt.value, '2026-03-03T00:00:00.000Z');
    // Re-importing the channel changes its visibility and replaces its members.
    await importObjects(t, workspaceId, [{ ...chans[1], visibility: 'restricted', members: ['u-bob'] }]);
    const after = (await call(t, bob, 'GET', '/v1/messages')).json();
    assert.equal(after.totalCount, 3);
    assert.deepEqual(
      after.data.map((m: { accessLevel: string }) => m.accessLevel),
      ['FULL', 'FULL', 'FULL'],
    );
    const alice = (await call(t, callers[0]!.secret, 'GET', '/v1/messages')).json();
    assert.deepEqual(
      alice.data.map((m: { accessLevel: string }) => m.accessLevel),
      ['METADATA', 'METADATA', 'FULL'],
    );
  });

  test('a channel of more members than one statement binds imports, and a re-import replaces them', async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const db = t.deps.db.kysely;
    // More members than either database binds in one statement as rows of channel_members
    // (SQLite 32,766 parameters, PostgreSQL 65,535; three a row). The users are written directly:
    // what is tested is the channel's line.
    const n = 22_000;
    const at = '2026-03-01T00:00:00.000Z';
    const users = Array.from({ length: n }, (_, i) => ({
      id: `usr_many${String(i).padStart(6, '0')}`,
      workspace_id: workspaceId,
      external_id: `m-${i}`,
      email: `m${i}@many.test`,
      email_key: `m${i}@many.test`,
      first_name: null,
      last_name: null,
      profile_image_url: null,
      role: 'member' as const,
      created_at: at,
      updated_at: at,
    }));
    for (let i = 0; i < n; i += 500)
      await db
        .insertInto('users')
        .values(users.slice(i, i + 500))
        .execute();
    const line = { object: 'channel', externalId: 'all', provider: 'slack', name: 'all-hands', visibility: 'public' };
    const first = await importObjects(t, workspaceId, [{ ...line, members: users.map((u) => u.external_id) }]);
    const id = first.ids.channel?.all as string;
    const secret = await keyFor(t, workspaceId, null, ['channels:read']);
    const members = async () => (await call(t, secret, 'GET', `/v1/channels/${id}`)).json().relationships.$members.values as string[];
    assert.equal((await members()).length, n);
    await importObjects(t, workspaceId, [{ ...line, members: users.slice(n / 2).map((u) => u.external_id) }]);
    assert.deepEqual(
      (await members()).sort(),
      users.slice(n / 2).map((u) => u.id),
    );
  });

  test('rolodex channel create, list, visibility, add-members, remove-members', async () => {
    const t = ctx();
    const { workspaceId, callers, users } = await seedPeople(t);
    const run = cli(t);
    const created = await run(
      'channel',
      'create',
      '--workspace',
      workspaceId,
      '--provider',
      'slack',
      '--name',
      'ops',
      '--visibility',
      'private',
      '--external-id',
      'ops',
      '--json',
    );
    assert.equal(created.code, 0, created.err);
    const channel = JSON.parse(created.out);
    assert.equal(channel.visibility, 'private');
    await importObjects(t, workspaceId, [message('m', 'ops', '2026-03-01T00:00:00Z', 'ops talk')]);
    const bob = callers[1]!.secret;
    assert.equal((await call(t, bob, 'GET', '/v1/messages')).json().totalCount, 0);

    const added = await run('channel', 'add-members', '--workspace', workspaceId, channel.id, 'u-bob', '--json');
    assert.equal(added.code, 0, added.err);
    assert.equal(JSON.parse(added.out).members, 1);
    assert.equal((await call(t, bob, 'GET', '/v1/messages')).json().data[0].accessLevel, 'FULL');

    assert.equal((await run('channel', 'visibility', '--workspace', workspaceId, 'ops', 'restricted')).code, 0);
    assert.equal((await run('channel', 'remove-members', '--workspace', workspaceId, 'ops', users.bob as string)).code, 0);
    assert.equal((await call(t, bob, 'GET', '/v1/messages')).json().data[0].accessLevel, 'METADATA');

    const list = await run('channel', 'list', '--workspace', workspaceId, '--json');
    assert.deepEqual(
      JSON.parse(list.out).map((c: { externalId: string; visibility: string; members: number; messages: number }) => [
        c.externalId,
        c.visibility,
        c.members,
        c.messages,
      ]),
      [['ops', 'restricted', 0, 1]],
    );
    const bad = await run('channel', 'visibility', '--workspace', workspaceId, 'ops', 'secret');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^rolodex channel: VISIBILITY must be one of public, restricted, private \(got "secret"\)\n/);
    assert.equal((await run('channel', 'add-members', '--workspace', workspaceId, 'nope', 'u-bob')).code, 1);
    assert.equal((await run('channel', 'add-members', '--workspace', workspaceId, 'ops', 'u-nobody')).code, 1);
    assert.equal((await run('channel', 'add-members', '--workspace', workspaceId, 'ops')).code, 2);
  });

  test("a USER that is one user's externalId and another's email is refused as ambiguous, nobody added; an id names its user", async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const db = t.deps.db.kysely;
    // Ann's address is Zed's externalId (an id from a system keyed by addresses).
    const ann = await createUser(operatorCtx(db, workspaceId), { email: 'ann@acme.test', role: 'member' });
    const zed = await createUser(operatorCtx(db, workspaceId), { email: 'zed@acme.test', role: 'member', externalId: 'ann@acme.test' });
    await importObjects(t, workspaceId, [
      { object: 'channel', externalId: 'board', provider: 'slack', name: 'board', visibility: 'private', members: [] },
      message('m-board', 'board', '2026-03-01T00:00:00Z', 'board talk'),
    ]);
    const run = cli(t);
    const members = async () =>
      (
        await db
          .selectFrom('channel_members as cm')
          .innerJoin('channels as c', 'c.id', 'cm.channel_id')
          .select('cm.user_id')
          .where('c.external_id', '=', 'board')
          .execute()
      )
        .map((r) => r.user_id)
        .sort();
    for (const sub of ['add-members', 'remove-members']) {
      const r = await run('channel', sub, '--workspace', workspaceId, 'board', 'ann@acme.test');
      assert.equal(r.code, 1, `${sub}: ${r.out}`);
      assert.match(r.err, /"ann@acme\.test" names more than one user/);
      assert.match(r.err, new RegExp(`${ann.id}.*${zed.id}|${zed.id}.*${ann.id}`));
    }
    assert.deepEqual(await members(), [], 'nobody was added to the private channel');
    assert.equal((await call(t, await keyFor(t, workspaceId, zed.id, ['messages:read']), 'GET', '/v1/messages')).json().totalCount, 0);
    // An id is never ambiguous; nor is a reference that names one user only.
    assert.equal((await run('channel', 'add-members', '--workspace', workspaceId, 'board', ann.id)).code, 0);
    assert.equal((await run('channel', 'add-members', '--workspace', workspaceId, 'board', 'zed@acme.test')).code, 0);
    assert.deepEqual(await members(), [ann.id, zed.id].sort());
    // The same rule names the user of a key.
    const key = await run('key', 'create', '--workspace', workspaceId, '--user', 'ann@acme.test', '--json');
    assert.equal(key.code, 1);
    assert.match(key.err, /names more than one user/);
  });

  test('rolodex channel visibility, add-members and remove-members name an unknown workspace as such', async () => {
    const t = ctx();
    await seedPeople(t);
    const run = cli(t);
    for (const args of [
      ['visibility', '--workspace', 'ws_nope', 'ops', 'private'],
      ['add-members', '--workspace', 'ws_nope', 'ops', 'u-bob'],
      ['remove-members', '--workspace', 'ws_nope', 'ops', 'u-bob'],
    ]) {
      const r = await run('channel', ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.err.trim(), 'rolodex channel: no workspace with id "ws_nope"', args.join(' '));
    }
  });

  test('rolodex channel create with a taken externalId is refused in one line, nothing created', async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const run = cli(t);
    const args = ['channel', 'create', '--workspace', workspaceId, '--provider', 'slack', '--name', 'ops', '--visibility', 'public', '--external-id', 'ops'];
    assert.equal((await run(...args)).code, 0);
    const again = await run(...args);
    assert.equal(again.code, 1);
    assert.equal(again.err, 'rolodex channel: a channel of this workspace has the externalId "ops" already');
    assert.deepEqual(await counts(t, workspaceId), { ops: 0 });
  });

  test('rolodex channel create refuses an --external-id the import would refuse (empty, over 255)', async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const run = cli(t);
    for (const ext of ['', 'x'.repeat(256)]) {
      const res = await run(
        'channel',
        'create',
        '--workspace',
        workspaceId,
        '--provider',
        'slack',
        '--name',
        'ops',
        '--visibility',
        'public',
        '--external-id',
        ext,
      );
      assert.equal(res.code, 1);
      assert.equal(res.err, 'rolodex channel: --external-id must be a string of 1 to 255 characters');
    }
    assert.deepEqual(await counts(t, workspaceId), {});
    assert.equal(
      (
        await run(
          'channel',
          'create',
          '--workspace',
          workspaceId,
          '--provider',
          'slack',
          '--name',
          'ops',
          '--visibility',
          'public',
          '--external-id',
          'x'.repeat(255),
        )
      ).code,
      0,
    );
  });
});
