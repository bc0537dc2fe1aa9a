// Decisions §8 as a generated matrix: caller (member user, non-member user, admin non-member,
// workspace key) × visibility × membership → FULL / METADATA / invisible, on get, list and
// totalCount; with canary text that must never reach a caller without FULL access, nor the logs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { changeMembers, setVisibility } from '../../src/channels/service.ts';
import { call, eachDialect } from '../helpers/app.ts';
import { type Caller, expectedAccess, importObjects, message, seedPeople } from '../helpers/messages.ts';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';

const VISIBILITIES = ['public', 'restricted', 'private'];
const MEMBER_SETS = [[], ['u-alice'], ['u-bob'], ['u-alice', 'u-carol']];

async function fetchAll(t: Parameters<typeof call>[0], secret: string) {
  const bodies: string[] = [];
  const ids: string[] = [];
  let total = -1;
  for (let offset = 0; ; offset += 5) {
    const res = await call(t, secret, 'GET', `/v1/messages?limit=5&offset=${offset}`);
    assert.equal(res.statusCode, 200, res.body);
    bodies.push(res.body);
    const body = res.json();
    if (total >= 0) assert.equal(body.totalCount, total, 'totalCount is stable across pages');
    total = body.totalCount;
    ids.push(...body.data.map((m: { id: string }) => m.id));
    if (body.data.length < 5) break;
  }
  return { ids, total, bodies, items: bodies.flatMap((b) => JSON.parse(b).data) };
}

eachDialect('messages visibility', (ctx) => {
  test('the matrix holds on get, list and totalCount, and no canary leaks', async () => {
    const t = ctx();
    const { workspaceId, callers } = await seedPeople(t);
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const objects: Array<Record<string, unknown>> = [];
    const msgs: Array<{ ext: string; visibility: string; members: string[]; text: string; sentAt: string }> = [];
    let n = 0;
    VISIBILITIES.forEach((visibility) =>
      MEMBER_SETS.forEach((members, j) => {
        const ch = `ch-${visibility}-${j}`;
        objects.push({ object: 'channel', externalId: ch, provider: 'slack', name: ch, visibility, members });
        for (let k = 0; k < 2; k++) {
          const ext = `m-${ch}-${k}`;
          const text = visibility === 'public' ? `hello ${ext}` : `${canary} ${ext} <secret>`;
          const sentAt = new Date(Date.UTC(2026, 2, 1, 0, n++ % 7)).toISOString(); // ties on purpose
          msgs.push({ ext, visibility, members, text, sentAt });
          objects.push(message(ext, ch, sentAt, text));
        }
      }),
    );
    const imported = await importObjects(t, workspaceId, objects);
    const idOf = (ext: string) => imported.ids.message?.[ext] as string;

    for (const caller of callers) {
      const expected = msgs
        .map((m) => ({ ...m, id: idOf(m.ext), access: expectedAccess(caller, m.visibility, m.members) }))
        .filter((m) => m.access !== null)
        .sort((a, b) => (a.sentAt === b.sentAt ? (a.id < b.id ? 1 : -1) : a.sentAt < b.sentAt ? 1 : -1));
      const list = await fetchAll(t, caller.secret);
      assert.equal(list.total, expected.length, `${caller.name}: totalCount`);
      assert.deepEqual(
        list.ids,
        expected.map((m) => m.id),
        `${caller.name}: visible messages, newest first, ties by id`,
      );
      for (const item of list.items) {
        const m = expected.find((e) => e.id === item.id);
        assert.equal(item.accessLevel, m?.access, `${caller.name}: list access of ${m?.ext}`);
      }

      for (const m of msgs) {
        const access = expectedAccess(caller, m.visibility, m.members);
        const res = await call(t, caller.secret, 'GET', `/v1/messages/${idOf(m.ext)}`);
        const where = `${caller.name} GET ${m.ext}`;
        if (access === null) {
          assert.equal(res.statusCode, 404, where);
          assert.equal(res.json().error.code, 'resource_not_found', where);
          continue;
        }
        assert.equal(res.statusCode, 200, where);
        const body = res.json();
        assert.equal(body.accessLevel, access, where);
        assert.equal(body.objectType, 'message');
        assert.deepEqual(body.fields.$text, { value: access === 'FULL' ? m.text : null, valueType: 'TEXT' }, where);
        assert.deepEqual(body.fields.$sentAt, { value: m.sentAt, valueType: 'DATETIME' });
        assert.equal(body.fields.$provider.value, 'slack');
        assert.equal(body.relationships.$channel.cardinality, 'has_one');
        assert.equal(body.relationships.$channel.values.length, 1);
        if (access !== 'FULL') assert.ok(!res.body.includes(canary), `${where}: canary leaked`);
      }
      const hasFullSecret = msgs.some((m) => m.visibility !== 'public' && expectedAccess(caller, m.visibility, m.members) === 'FULL');
      if (!hasFullSecret) for (const b of list.bodies) assert.ok(!b.includes(canary), `${caller.name}: canary in a list page`);
      else
        assert.ok(
          list.bodies.some((b) => b.includes(canary)),
          `${caller.name} reads the text it may read`,
        );
    }
    assert.ok(t.logs().includes('listMessages'), 'requests were logged');
    assert.ok(!t.logs().includes(canary), 'message text reached the logs');
  });

  test('a visibility or membership change applies to the very next request', async () => {
    const t = ctx();
    const { workspaceId, callers } = await seedPeople(t);
    const [alice, bob, , wsKey] = callers as [Caller, Caller, Caller, Caller];
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const res = await importObjects(t, workspaceId, [
      { object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'private', members: ['u-alice'] },
      message('m', 'c', '2026-03-01T00:00:00.000Z', canary),
    ]);
    const id = res.ids.message?.m as string;
    const db = t.deps.db.kysely;
    const state = async (c: Caller) => {
      const one = await call(t, c.secret, 'GET', `/v1/messages/${id}`);
      const list = (await call(t, c.secret, 'GET', '/v1/messages')).json();
      const access = one.statusCode === 404 ? null : one.json().accessLevel;
      assert.equal(list.totalCount, access === null ? 0 : 1);
      assert.deepEqual(
        list.data.map((m: { accessLevel: string }) => m.accessLevel),
        access === null ? [] : [access],
      );
      if (access !== 'FULL') assert.ok(!one.body.includes(canary) && !JSON.stringify(list).includes(canary));
      return access;
    };
    assert.deepEqual([await state(alice), await state(bob), await state(wsKey)], ['FULL', null, null]);
    await write(db, (tx) => setVisibility(operatorCtx(tx, workspaceId), { channel: 'c', visibility: 'restricted' }));
    assert.deepEqual([await state(alice), await state(bob), await state(wsKey)], ['FULL', 'METADATA', 'METADATA']);
    await write(db, (tx) => changeMembers(operatorCtx(tx, workspaceId), { channel: 'c', add: ['u-bob'], remove: ['u-alice'] }));
    assert.deepEqual([await state(alice), await state(bob), await state(wsKey)], ['METADATA', 'FULL', 'METADATA']);
    await write(db, (tx) => setVisibility(operatorCtx(tx, workspaceId), { channel: 'c', visibility: 'public' }));
    assert.deepEqual([await state(alice), await state(bob), await state(wsKey)], ['FULL', 'FULL', 'FULL']);
    await write(db, (tx) => setVisibility(operatorCtx(tx, workspaceId), { channel: 'c', visibility: 'private' }));
    assert.deepEqual([await state(alice), await state(bob), await state(wsKey)], [null, 'FULL', null]);
  });

  test('another workspace sees nothing, and its ids are 404 like random ones', async () => {
    const t = ctx();
    const a = await seedPeople(t);
    const b = await seedPeople(t);
    const res = await importObjects(t, a.workspaceId, [
      { object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'public', members: [] },
      message('m', 'c', '2026-03-01T00:00:00.000Z', 'hi'),
    ]);
    const other = (b.callers[0] as Caller).secret;
    const list = (await call(t, other, 'GET', '/v1/messages')).json();
    assert.deepEqual(list, { data: [], object: 'list', totalCount: 0 });
    const foreign = await call(t, other, 'GET', `/v1/messages/${res.ids.message?.m}`);
    const random = await call(t, other, 'GET', '/v1/messages/msg_00000000000000000000000000');
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().error.code, random.json().error.code);
    assert.equal(foreign.json().error.message.replace(/"[^"]*"/, ''), random.json().error.message.replace(/"[^"]*"/, ''));
  });

  test('messages:read is required', async () => {
    const t = ctx();
    const { workspaceId } = await seedPeople(t);
    const { keyFor } = await import('../helpers/app.ts');
    const secret = await keyFor(t, workspaceId, null, ['lists:read']);
    for (const url of ['/v1/messages', '/v1/messages/msg_x']) {
      const res = await call(t, secret, 'GET', url);
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error.code, 'insufficient_scope');
    }
  });
});
