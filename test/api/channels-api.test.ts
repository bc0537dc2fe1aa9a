// GET /v1/channels and GET /v1/channels/{id} (docs/messages.md §Channels): a channel is visible to
// a caller exactly when its messages are; the list holds the visible ones, newest first, with an
// exact totalCount; an invisible channel is 404 like an unknown id; the resource keeps to the
// served OpenAPI document and to the entity shape of the contract.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { changeMembers, setVisibility } from '../../src/channels/service.ts';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { expectedAccess, importObjects, message, seedPeople, type Caller } from '../helpers/messages.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

interface Made {
  ext: string;
  visibility: string;
  members: string[];
}

/** Channels of every visibility and membership, each with one message; created oldest first. */
const CHANNELS: Made[] = [];
for (const visibility of ['public', 'restricted', 'private'])
  for (const members of [[], ['u-alice'], ['u-bob'], ['u-alice', 'u-bob']])
    CHANNELS.push({ ext: `c-${visibility}-${members.join('+') || 'none'}`, visibility, members });

async function seed(t: TestApp) {
  const people = await seedPeople(t);
  const objects = CHANNELS.flatMap((c, i) => [
    { object: 'channel', externalId: c.ext, provider: 'slack', name: `#${c.ext}`, visibility: c.visibility, members: c.members },
    message(`m-${c.ext}`, c.ext, `2026-03-01T00:00:${String(i).padStart(2, '0')}.000Z`, `text of ${c.ext}`),
  ]);
  const res = await importObjects(t, people.workspaceId, objects);
  const ids = res.ids.channel as Record<string, string>;
  const callers: Caller[] = [];
  for (const c of people.callers) {
    const userId = c.userExt === null ? null : (people.users[c.name] as string);
    callers.push({ ...c, secret: await keyFor(t, people.workspaceId, userId, ['channels:read', 'messages:read']) });
  }
  return { ...people, callers, ids };
}

eachDialect('channels API', (ctx) => {
  let ops: Map<string, Operation>;
  const checker = responseChecker();
  before(async () => {
    ops = new Map(operationsOf(await loadDocument(ctx())).map((o) => [o.operationId, o]));
  });
  async function get(t: TestApp, secret: string, operationId: string, url: string) {
    const res = await call(t, secret, 'GET', url);
    const why = checker.check(ops.get(operationId)!, res);
    assert.equal(why, null, `${url}: ${why}`);
    return res;
  }

  test('each caller lists exactly the channels whose messages it sees, newest first, with an exact totalCount', async () => {
    const t = ctx();
    const s = await seed(t);
    for (const caller of s.callers) {
      // Written out from the contract's rule, independently of the server's SQL.
      const expected = CHANNELS.filter((c) => expectedAccess(caller, c.visibility, c.members) !== null)
        .reverse()
        .map((c) => s.ids[c.ext]);
      const seen: string[] = [];
      for (let offset = 0; offset < expected.length + 5; offset += 5) {
        const page = (await get(t, caller.secret, 'listChannels', `/v1/channels?limit=5&offset=${offset}`)).json();
        assert.equal(page.object, 'list');
        assert.equal(page.totalCount, expected.length, `${caller.name}: totalCount at offset ${offset}`);
        seen.push(...page.data.map((c: { id: string }) => c.id));
      }
      assert.deepEqual(seen, expected, `${caller.name}: the visible channels, newest first`);
      // The messages follow the same rule: the channels of the visible messages are the visible channels.
      const msgs = (await call(t, caller.secret, 'GET', '/v1/messages')).json();
      const fromMessages = new Set(msgs.data.map((m: any) => m.relationships.$channel.values[0]));
      assert.deepEqual(new Set(expected), fromMessages, `${caller.name}: channels and messages agree`);
    }
  });

  test('retrieve: the entity shape; an invisible channel answers exactly as an unknown id', async () => {
    const t = ctx();
    const s = await seed(t);
    const other = await seedWorkspace(t, { scopes: ['channels:read'] });
    const unknown = (await get(t, s.callers[0]!.secret, 'getChannel', '/v1/channels/chn_01HZZZZZZZZZZZZZZZZZZZZZZZ')).json();
    assert.equal(unknown.error.code, 'resource_not_found');
    for (const caller of s.callers) {
      for (const c of CHANNELS) {
        const id = s.ids[c.ext] as string;
        const res = await get(t, caller.secret, 'getChannel', `/v1/channels/${id}`);
        if (expectedAccess(caller, c.visibility, c.members) === null) {
          assert.equal(res.statusCode, 404, `${caller.name} ${c.ext}`);
          const err = res.json().error;
          assert.equal(err.code, 'resource_not_found');
          assert.equal(err.message.replace(id, 'ID'), unknown.error.message.replace('chn_01HZZZZZZZZZZZZZZZZZZZZZZZ', 'ID'));
          continue;
        }
        assert.equal(res.statusCode, 200, `${caller.name} ${c.ext}`);
        const body = res.json();
        const memberIds = c.members.map((ext) => s.users[ext.slice(2)]).sort();
        assert.deepEqual(
          { ...body, relationships: { $members: { ...body.relationships.$members, values: [...body.relationships.$members.values].sort() } } },
          {
            id,
            createdAt: body.createdAt,
            fields: {
              $name: { value: `#${c.ext}`, valueType: 'TEXT' },
              $provider: { value: 'slack', valueType: 'TEXT' },
              $visibility: { value: c.visibility, valueType: 'TEXT' },
            },
            httpLink: null,
            objectType: 'channel',
            relationships: { $members: { cardinality: 'has_many', objectType: 'member', values: memberIds } },
            updatedAt: body.updatedAt,
            externalId: c.ext,
          },
        );
      }
    }
    // Another workspace's channel: the same 404, and nothing of ours in its list.
    const foreign = await call(t, other.secret, 'GET', `/v1/channels/${s.ids['c-public-none']}`);
    assert.equal(foreign.statusCode, 404);
    const theirs = (await call(t, other.secret, 'GET', '/v1/channels')).json();
    assert.deepEqual([theirs.totalCount, theirs.data], [0, []]);
  });

  test('a visibility or membership change applies to the very next request', async () => {
    const t = ctx();
    const s = await seed(t);
    const [alice, bob, , wsKey] = s.callers as [Caller, Caller, Caller, Caller];
    const id = s.ids['c-private-u-alice'] as string;
    const db = t.deps.db.kysely;
    const sees = async () =>
      Promise.all(
        [alice, bob, wsKey].map(async (c) => {
          const one = (await call(t, c.secret, 'GET', `/v1/channels/${id}`)).statusCode === 200;
          const listed = (await call(t, c.secret, 'GET', '/v1/channels')).json().data.some((x: { id: string }) => x.id === id);
          assert.equal(one, listed, `${c.name}: retrieve and list agree`);
          return one;
        }),
      );
    assert.deepEqual(await sees(), [true, false, false]);
    await write(db, (tx) => changeMembers(operatorCtx(tx, s.workspaceId), { channel: 'c-private-u-alice', add: ['u-bob'], remove: ['u-alice'] }));
    assert.deepEqual(await sees(), [false, true, false]);
    await write(db, (tx) => setVisibility(operatorCtx(tx, s.workspaceId), { channel: 'c-private-u-alice', visibility: 'restricted' }));
    assert.deepEqual(await sees(), [true, true, true]);
  });

  test('a change of $members moves updatedAt; a change that changes nothing leaves it', async () => {
    const t = ctx();
    const s = await seed(t);
    const wsKey = (s.callers[3] as Caller).secret;
    const id = s.ids['c-public-u-alice'] as string;
    const db = t.deps.db.kysely;
    const read = async () => (await call(t, wsKey, 'GET', `/v1/channels/${id}`)).json();
    const change = (at: string, input: { add?: string[]; remove?: string[] }) =>
      write(db, (tx) => changeMembers(operatorCtx(tx, s.workspaceId, { now: Date.parse(at) }), { channel: 'c-public-u-alice', ...input }));
    const before = await read();
    await change('2030-01-01T00:00:00.000Z', { add: ['u-alice'], remove: ['u-bob'] });
    assert.equal((await read()).updatedAt, before.updatedAt, 'nothing changed');
    await change('2030-01-02T00:00:00.000Z', { add: ['u-bob'] });
    const added = await read();
    assert.deepEqual(added.relationships.$members.values, [s.users.alice, s.users.bob]);
    assert.equal(added.updatedAt, '2030-01-02T00:00:00.000Z');
    await change('2030-01-03T00:00:00.000Z', { remove: ['u-alice'] });
    assert.equal((await read()).updatedAt, '2030-01-03T00:00:00.000Z');
  });

  test('channels:read is required: messages:read alone is 403 insufficient_scope', async () => {
    const t = ctx();
    const s = await seedPeople(t);
    const only = await keyFor(t, s.workspaceId, s.users.alice as string, ['messages:read']);
    for (const url of ['/v1/channels', '/v1/channels/chn_x']) {
      const res = await call(t, only, 'GET', url);
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.json().error.code, 'insufficient_scope');
      assert.match(res.json().error.message, /channels:read/);
    }
  });
});
