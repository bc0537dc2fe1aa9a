// `rolodex export` of channels and messages (docs/import.md §Export): channels of every visibility
// with their members and messages of both text types, loaded with `rolodex import` and `rolodex
// channel`, exported and imported into an empty workspace, read the same through the API (ids
// differ: they are compared by the names the export gives, an externalId or the original's id).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Entity = {
  id: string;
  externalId: string | null;
  accessLevel?: string;
  fields: Record<string, { value: unknown; valueType: string }>;
  relationships: Record<string, { values: string[] }>;
};

/** Every entity a list route shows the caller (pages of 25), and its totalCount. */
async function all(t: TestApp, secret: string, url: string): Promise<{ total: number; data: Entity[] }> {
  const data: Entity[] = [];
  for (let offset = 0; ; offset += 25) {
    const r = await call(t, secret, 'GET', `${url}?limit=25&offset=${offset}`);
    assert.equal(r.statusCode, 200, r.body);
    const page = r.json();
    data.push(...(page.data as Entity[]));
    if (page.data.length < 25) return { total: page.totalCount as number, data };
  }
}

/** Each entity's access, fields and relationships by its name, with ids replaced by names (`name`). */
function byName(list: Entity[], name: (id: string) => string) {
  const out = new Map<string, unknown>();
  for (const e of list) {
    // The name of an entity is its externalId, else (only in the original) its id.
    assert.equal(e.externalId ?? e.id, name(e.id));
    const relationships: Record<string, string[]> = {};
    for (const [k, r] of Object.entries(e.relationships)) relationships[k] = r.values.map(name).toSorted();
    out.set(name(e.id), { accessLevel: e.accessLevel, fields: e.fields, relationships });
  }
  return out;
}

const at = (h: number) => new Date(Date.parse('2026-03-01T09:00:00.000Z') + h * 3_600_000).toISOString();

eachDialect('rolodex export: channels and messages', (ctx) => {
  test('export, then import into an empty workspace, reproduces every channel, member and message', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const dir = t.tdb.dataDir;
    const source = join(dir, 'chat.ndjson');
    const text = (value: string, valueType = 'TEXT') => ({ value, valueType });
    const message = (externalId: string, channel: string, fields: Record<string, unknown>) => ({ object: 'message', externalId, channel, fields });
    const lines = [
      { object: 'user', externalId: 'u-ann', email: `ann-${a.workspaceId}@example.test`, role: 'member' },
      { object: 'user', externalId: 'u-bob', email: `bob-${a.workspaceId}@example.test`, role: 'member' },
      { object: 'channel', externalId: 'ch-pub', provider: 'slack', name: 'general', visibility: 'public', members: ['u-ann', 'u-bob'] },
      { object: 'channel', externalId: 'ch-res', provider: 'slack', name: 'deals', visibility: 'restricted', members: ['u-bob'] },
      { object: 'channel', externalId: 'ch-priv', provider: 'teams', name: 'board', visibility: 'private', members: ['u-ann'] },
      message('m-1', 'ch-pub', { $text: text('Hello'), $sentAt: text(at(0), 'DATETIME') }),
      message('m-2', 'ch-pub', {
        $text: text('Lunch on <b>Friday</b>', 'HTML'),
        $sentAt: text('2026-03-01T11:30:00+01:00', 'DATETIME'),
        $providerThreadId: text('thread-1'),
        $editedAt: text(at(3), 'DATETIME'),
      }),
      message('m-3', 'ch-res', { $text: text('Discount approved'), $sentAt: text(at(2), 'DATETIME'), $provider: text('slack-connect') }),
      message('m-4', 'ch-priv', {
        $text: text('<p>Q2 plan</p>', 'HTML'),
        $sentAt: text(at(4), 'DATETIME'),
        $providerThreadId: text('thread-2'),
        $editedAt: text(at(5), 'DATETIME'),
      }),
      message('m-5', 'ch-priv', { $text: text('Moved to Thursday'), $sentAt: text(at(4), 'DATETIME'), $providerThreadId: text('thread-2') }),
    ];
    writeFileSync(source, lines.map((l) => JSON.stringify(l)).join('\n'));
    const loaded = await rolodex(t, ['import', '--workspace', a.workspaceId, source, '--json']);
    assert.equal(loaded.code, 0, loaded.err);
    const aIds = JSON.parse(loaded.out).ids as Record<string, Record<string, string>>;
    // A channel comes from import or from `rolodex channel create`, which may leave out the
    // externalId; messages come only from import, whose lines name their channel by externalId,
    // so a channel without one holds no message. A user without one (the seeded admin) is added
    // to channels by id.
    const made = await rolodex(t, [
      'channel',
      'create',
      '--workspace',
      a.workspaceId,
      '--provider',
      'discord',
      '--name',
      'loose',
      '--visibility',
      'private',
      '--json',
    ]);
    assert.equal(made.code, 0, made.err);
    const loose = JSON.parse(made.out) as { id: string; externalId: string | null };
    assert.equal(loose.externalId, null);
    for (const ch of ['ch-pub', 'ch-res', 'ch-priv', loose.id]) {
      const r = await rolodex(t, ['channel', 'add-members', '--workspace', a.workspaceId, ch, a.userId]);
      assert.equal(r.code, 0, r.err);
    }
    assert.equal((await rolodex(t, ['channel', 'add-members', '--workspace', a.workspaceId, loose.id, 'u-bob'])).code, 0);

    const file = join(dir, 'chat-export.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const written = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: string; externalId: string; members?: string[]; relationships?: unknown });
    const objects = written.map((l) => l.object);
    assert.deepEqual(objects, ['user', 'user', 'user', 'channel', 'channel', 'channel', 'channel', 'message', 'message', 'message', 'message', 'message']);
    const looseLine = written.find((l) => l.externalId === loose.id);
    assert.deepEqual(looseLine?.members?.toSorted(), [a.userId, 'u-bob'].toSorted(), 'members are named by externalId, else id');
    assert.ok(
      written.every((l) => l.relationships === undefined),
      'files are not exported',
    );

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const { counts, ids } = JSON.parse(im.out) as { counts: Record<string, number>; ids: Record<string, Record<string, string>> };
    assert.deepEqual(counts, { user: 3, channel: 4, message: 5 });

    // The names the export gives: an externalId, else the original's id.
    const origName = new Map<string, string>([
      [a.userId, a.userId],
      [loose.id, loose.id],
    ]);
    for (const byExt of Object.values(aIds)) for (const [ext, id] of Object.entries(byExt)) origName.set(id, ext);
    const copyName = new Map<string, string>();
    for (const byExt of Object.values(ids)) for (const [ext, id] of Object.entries(byExt)) copyName.set(id, ext);
    const nameIn = (names: Map<string, string>) => (id: string) => names.get(id) ?? `?${id}`;

    // The seeded admin is a member of every channel: its key reads them all, every message at FULL.
    const copyAdmin = ids.user?.[a.userId];
    assert.ok(copyAdmin, 'the seeded admin was exported under its id');
    const bSecret = await keyFor(t, b.workspaceId, copyAdmin);
    for (const route of ['/v1/channels', '/v1/messages']) {
      const [orig, copy] = [await all(t, a.secret, route), await all(t, bSecret, route)];
      assert.equal(copy.total, orig.total, route);
      assert.deepEqual(byName(copy.data, nameIn(copyName)), byName(orig.data, nameIn(origName)), route);
    }
    const m2 = (await call(t, bSecret, 'GET', `/v1/messages/${ids.message?.['m-2']}`)).json<Entity>();
    assert.deepEqual(m2.fields.$text, { value: 'Lunch on <b>Friday</b>', valueType: 'HTML' });
    assert.equal(m2.fields.$sentAt?.value, '2026-03-01T10:30:00.000Z');
    assert.equal(m2.fields.$editedAt?.value, at(3));
    const copyLoose = (await call(t, bSecret, 'GET', `/v1/channels/${ids.channel?.[loose.id]}`)).json<Entity>();
    assert.equal(copyLoose.externalId, loose.id);
    assert.equal(copyLoose.fields.$visibility?.value, 'private');

    // Through a workspace key, what each visibility shows is the same in both.
    const [aKey, bKey] = [await keyFor(t, a.workspaceId, null), await keyFor(t, b.workspaceId, null)];
    const levels = async (secret: string, names: Map<string, string>) =>
      (await all(t, secret, '/v1/messages')).data.map((m) => `${nameIn(names)(m.id)}:${m.accessLevel}`).toSorted();
    assert.deepEqual(await levels(bKey, copyName), await levels(aKey, origName));
    assert.deepEqual(await levels(aKey, origName), ['m-1:FULL', 'm-2:FULL', 'm-3:METADATA']);
  });
});
