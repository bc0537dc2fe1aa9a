// The message resource and its list: shape, newest-first order with id tie-break, pagination
// boundaries, every page through the service, $files at FULL and METADATA.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listMessages } from '../../src/messages/service.ts';
import { call, eachDialect } from '../helpers/app.ts';
import { importObjects, message, seedPeople } from '../helpers/messages.ts';
import { operatorCtx } from '../../src/lib/context.ts';

eachDialect('messages', (ctx) => {
  test('a message has exactly the resource shape of the spec', async () => {
    const t = ctx();
    const { workspaceId, callers } = await seedPeople(t);
    const res = await importObjects(t, workspaceId, [
      { object: 'channel', externalId: 'c', provider: 'teams', name: 'c', visibility: 'public', members: [] },
      message('m', 'c', '2026-03-01T10:00:00Z', '<p>Hi</p>', {
        $text: { value: '<p>Hi</p>', valueType: 'HTML' },
        $editedAt: { value: '2026-03-01T11:00:00.000Z', valueType: 'DATETIME' },
        $providerThreadId: { value: 'th-1', valueType: 'TEXT' },
      }),
    ]);
    const id = res.ids.message?.m as string;
    const chn = res.ids.channel?.c as string;
    const body = (await call(t, callers[0]!.secret, 'GET', `/v1/messages/${id}`)).json();
    assert.match(body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(body, {
      id,
      accessLevel: 'FULL',
      createdAt: body.createdAt,
      fields: {
        $text: { value: '<p>Hi</p>', valueType: 'HTML' },
        $sentAt: { value: '2026-03-01T10:00:00.000Z', valueType: 'DATETIME' },
        $provider: { value: 'teams', valueType: 'TEXT' },
        $providerThreadId: { value: 'th-1', valueType: 'TEXT' },
        $editedAt: { value: '2026-03-01T11:00:00.000Z', valueType: 'DATETIME' },
      },
      httpLink: null,
      objectType: 'message',
      relationships: {
        $channel: { cardinality: 'has_one', objectType: 'channel', values: [chn] },
        $files: { cardinality: 'has_many', objectType: 'file', values: [] },
      },
      updatedAt: body.createdAt,
      externalId: 'm',
    });
  });

  test('newest $sentAt first, ties by id; pagination boundaries; every page through the service', async () => {
    const t = ctx();
    const { workspaceId, callers, users } = await seedPeople(t);
    const objects: Array<Record<string, unknown>> = [
      { object: 'channel', externalId: 'pub', provider: 'slack', name: 'pub', visibility: 'public', members: [] },
      { object: 'channel', externalId: 'res', provider: 'slack', name: 'res', visibility: 'restricted', members: [] },
      { object: 'channel', externalId: 'pri', provider: 'slack', name: 'pri', visibility: 'private', members: ['u-alice'] },
      { object: 'channel', externalId: 'hid', provider: 'slack', name: 'hid', visibility: 'private', members: [] },
    ];
    const chans = ['pub', 'res', 'pri', 'hid'];
    for (let i = 0; i < 40; i++) {
      // 10 distinct instants, 4 messages each: every page boundary cuts through ties.
      objects.push(message(`m${i}`, chans[i % 4] as string, new Date(Date.UTC(2026, 0, 1 + (i % 10))).toISOString(), `t${i}`));
    }
    const res = await importObjects(t, workspaceId, objects);
    const alice = callers[0]!.secret;
    const visible = Object.entries(res.ids.message ?? {})
      .filter(([ext]) => Number(ext.slice(1)) % 4 !== 3)
      .map(([ext, id]) => ({ id, sentAt: new Date(Date.UTC(2026, 0, 1 + (Number(ext.slice(1)) % 10))).toISOString() }))
      .sort((a, b) => (a.sentAt === b.sentAt ? (a.id < b.id ? 1 : -1) : a.sentAt < b.sentAt ? 1 : -1))
      .map((m) => m.id);
    assert.equal(visible.length, 30);

    const page = async (q: string) => (await call(t, alice, 'GET', `/v1/messages${q}`)).json();
    const first = await page('');
    assert.equal(first.totalCount, 30);
    assert.deepEqual(
      first.data.map((m: { id: string }) => m.id),
      visible.slice(0, 25),
    );
    assert.deepEqual(
      (await page('?offset=25')).data.map((m: { id: string }) => m.id),
      visible.slice(25),
    );
    assert.deepEqual(
      (await page('?offset=29&limit=5')).data.map((m: { id: string }) => m.id),
      visible.slice(29),
    );
    for (const q of ['?offset=30', '?offset=31', '?offset=100000']) assert.deepEqual(await page(q), { data: [], object: 'list', totalCount: 30 });
    for (const q of ['limit=0', 'limit=26', 'offset=-1', 'limit=x']) {
      const r = await call(t, alice, 'GET', `/v1/messages?${q}`);
      assert.equal(r.statusCode, 400, q);
      assert.equal(r.json().error.code, 'invalid_parameter');
    }

    // Alice's user key, as the API would build its ctx.
    const caller = {
      ...operatorCtx(t.deps.db.kysely, workspaceId),
      actor: { workspaceId, subjectType: 'user' as const, userId: users.alice as string, role: 'member' as const },
    };
    for (let offset = 0; offset <= 31; offset += 3) {
      for (const limit of [1, 7, 25]) {
        const want = visible.slice(offset, offset + limit);
        const got = await listMessages(caller, { limit, offset });
        assert.deepEqual(
          got.data.map((m) => m.id),
          want,
          `limit ${limit} offset ${offset}`,
        );
        assert.equal(got.totalCount, 30);
      }
    }
  });

  test('$files at FULL in order, emptied at METADATA', async () => {
    const t = ctx();
    const { workspaceId, callers } = await seedPeople(t);
    const res = await importObjects(t, workspaceId, [
      { object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'restricted', members: ['u-alice'] },
      message('m', 'c', '2026-03-01T10:00:00Z', 'with files'),
    ]);
    const id = res.ids.message?.m as string;
    // The file kind is not importable on this branch: the links are written directly.
    await t.deps.db.kysely
      .insertInto('message_files')
      .values([
        { message_id: id, file_id: 'fil_b', position: 0 },
        { message_id: id, file_id: 'fil_a', position: 1 },
      ])
      .execute();
    const [alice, bob] = callers;
    const full = (await call(t, alice!.secret, 'GET', `/v1/messages/${id}`)).json();
    assert.deepEqual(full.relationships.$files, { cardinality: 'has_many', objectType: 'file', values: ['fil_b', 'fil_a'] });
    const meta = await call(t, bob!.secret, 'GET', `/v1/messages/${id}`);
    assert.equal(meta.json().accessLevel, 'METADATA');
    assert.deepEqual(meta.json().relationships.$files.values, []);
    assert.ok(!meta.body.includes('fil_b') && !meta.body.includes('with files'));
    const list = await call(t, bob!.secret, 'GET', '/v1/messages');
    assert.ok(!list.body.includes('fil_b') && !list.body.includes('with files'));
    assert.deepEqual((await call(t, alice!.secret, 'GET', '/v1/messages')).json().data[0].relationships.$files.values, ['fil_b', 'fil_a']);
  });
});
