// `rolodex import` and the change log (docs/import.md §Rules, docs/history.md, docs/events.md),
// on both databases: new records get their `<type>.created` event and starting snapshot, records
// the import changes their `<type>.updated` and one history row per changed field, with the
// operator as actor; an import line that changes nothing appends nothing and leaves updatedAt, and
// one that changes only archived fields appends no event.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { type CommitMode, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { write } from '../../src/db/index.ts';
import { appendEvents, appendEventsJson } from '../../src/changes/service.ts';
import { createHttpLinks } from '../../src/lib/links.ts';
import { BULK_LOAD } from '../../src/records/import.ts';
import { requireDefinitions, toResource } from '../../src/records/resource.ts';
import { resourceJson } from '../../src/records/resource-json.ts';
import { addField } from '../../src/definitions/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const contact = (externalId: string, first: string, last: string, email: string) => ({
  object: 'contact',
  externalId,
  fields: { $name: { value: { firstName: first, lastName: last } }, $email: { value: [email] } },
});
const ndjson = (objects: unknown[]) => objects.map((o) => JSON.stringify(o)).join('\n');
const BULK = { ...BULK_LOAD };

eachDialect('import: events and field history', (ctx) => {
  afterEach(() => Object.assign(BULK_LOAD, BULK));

  async function run(s: Seeded, objects: unknown[], commit: CommitMode = 'atomic') {
    return runImport(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: ndjson(objects), commit });
  }
  async function events(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body));
  }
  async function get(s: Seeded, url: string) {
    const res = await call(ctx(), s.secret, 'GET', url);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res.json();
  }

  for (const commit of ['atomic', 'batched'] as const) {
    test(`${commit}: created, updated, and a no-op re-import appends nothing`, async () => {
      const s = await seedWorkspace(ctx());
      const first = await run(s, [contact('c1', 'Ada', 'Byron', 'ada@x.test'), contact('c2', 'Alan', 'Turing', 'alan@x.test')], commit);
      const c1 = first.ids.contact!.c1!;
      const c2 = first.ids.contact!.c2!;
      const created = await events(s.workspaceId);
      assert.deepEqual(
        created.map((e) => [e.type, e.data.object.id]),
        [
          ['contact.created', c1],
          ['contact.created', c2],
        ],
      );
      for (const e of created) {
        assert.deepEqual(e.actor, { type: 'operator', id: null });
        assert.deepEqual(e.data, { object: await get(s, `/v1/contacts/${e.data.object.id}`) });
      }
      const before = await get(s, `/v1/contacts/${c1}`);

      // c1 renamed, c2 as it was, c3 new.
      const second = [
        contact('c1', 'Ada', 'Lovelace', 'ada@x.test'),
        contact('c2', 'Alan', 'Turing', 'alan@x.test'),
        contact('c3', 'Grace', 'Hopper', 'g@x.test'),
      ];
      const again = await run(s, second, commit);
      const c3 = again.ids.contact!.c3!;
      const evs = (await events(s.workspaceId)).slice(2);
      assert.deepEqual(evs.map((e) => [e.type, e.data.object.id]).sort(), [
        ['contact.created', c3],
        ['contact.updated', c1],
      ]);
      const updated = evs.find((e) => e.type === 'contact.updated');
      const after = await get(s, `/v1/contacts/${c1}`);
      assert.deepEqual(updated.data, {
        object: after,
        changes: { $name: { from: { firstName: 'Ada', lastName: 'Byron' }, to: { firstName: 'Ada', lastName: 'Lovelace' } } },
      });
      assert.deepEqual(updated.actor, { type: 'operator', id: null });

      const name = await get(s, `/v1/contacts/${c1}/fields/$name/history`);
      assert.deepEqual(
        name.data.map((h: { value: unknown; isCreate: boolean; recordedAt: string }) => [h.value, h.isCreate, h.recordedAt]),
        [
          [{ firstName: 'Ada', lastName: 'Lovelace' }, false, after.updatedAt],
          [{ firstName: 'Ada', lastName: 'Byron' }, true, before.createdAt],
        ],
      );
      const email = await get(s, `/v1/contacts/${c1}/fields/$email/history`);
      assert.deepEqual(
        email.data.map((h: { value: unknown; isCreate: boolean }) => [h.value, h.isCreate]),
        [[['ada@x.test'], true]],
      );
      const unchanged = await get(s, `/v1/contacts/${c2}/fields/$name/history`);
      assert.equal(unchanged.data.length, 1);
      const c2After = await get(s, `/v1/contacts/${c2}`);
      assert.equal(c2After.updatedAt, created[1].data.object.updatedAt, 'a line that changes nothing leaves updatedAt');

      // The same file again: nothing changes, nothing is appended.
      await run(s, second, commit);
      assert.equal((await events(s.workspaceId)).length, 4);
      assert.deepEqual(await get(s, `/v1/contacts/${c1}/fields/$name/history`), name);
      assert.equal((await get(s, `/v1/contacts/${c1}`)).updatedAt, after.updatedAt);
    });
  }

  test('a bulk load logs every new record, and a cleared field is a null entry', async () => {
    Object.assign(BULK_LOAD, { min: 1, share: 0 });
    const s = await seedWorkspace(ctx());
    const objects = Array.from({ length: 30 }, (_, i) => contact(`b${i}`, 'N', `L${i}`, `n${i}@x.test`));
    const r = await run(s, objects);
    const evs = await events(s.workspaceId);
    assert.equal(evs.length, 30);
    assert.ok(evs.every((e) => e.type === 'contact.created'));
    assert.deepEqual(new Set(evs.map((e) => e.data.object.id)), new Set(Object.values(r.ids.contact!)));
    const id = r.ids.contact!.b7!;
    const h = await get(s, `/v1/contacts/${id}/fields/$email/history`);
    assert.deepEqual(
      h.data.map((x: { value: unknown; isCreate: boolean }) => [x.value, x.isCreate]),
      [[['n7@x.test'], true]],
    );

    // An import replaces every field: b7 without $email clears it.
    await run(s, [{ object: 'contact', externalId: 'b7', fields: { $name: { value: { firstName: 'N', lastName: 'L7' } } } }]);
    const more = (await events(s.workspaceId)).slice(30);
    assert.deepEqual(
      more.map((e) => [e.type, e.data.changes]),
      [['contact.updated', { $email: { from: ['n7@x.test'], to: null } }]],
    );
    const cleared = await get(s, `/v1/contacts/${id}/fields/$email/history`);
    assert.deepEqual(
      cleared.data.map((x: { value: unknown; isCreate: boolean }) => [x.value, x.isCreate]),
      [
        [null, false],
        [['n7@x.test'], true],
      ],
    );
  });

  test('an archived field changed by archivedFields is in its history, never in an event', async () => {
    const s = await seedWorkspace(ctx());
    await addField(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'gone', label: 'Gone', valueType: 'TEXT', archived: true });
    const line = (last: string, gone: string) => ({
      ...contact('c1', 'Ada', last, 'ada@x.test'),
      archivedFields: { gone: { value: gone, valueType: 'TEXT' } },
    });
    const id = (await run(s, [line('Byron', 'v1')])).ids.contact!.c1!;
    assert.deepEqual(
      (await events(s.workspaceId)).map((e) => e.type),
      ['contact.created'],
    );

    // Only the archived value changes: the API shows no field changed, so no event (docs/events.md §Shape).
    await run(s, [line('Byron', 'v2')]);
    assert.equal((await events(s.workspaceId)).length, 1);
    // With a shown field: the event names that field only, as a merge's names only the API's fields.
    await run(s, [line('Lovelace', 'v3')]);
    const evs = (await events(s.workspaceId)).slice(1);
    assert.deepEqual(
      evs.map((e) => [e.type, e.data.changes]),
      [['contact.updated', { $name: { from: { firstName: 'Ada', lastName: 'Byron' }, to: { firstName: 'Ada', lastName: 'Lovelace' } } }]],
    );
    assert.deepEqual(evs[0].data.object, await get(s, `/v1/contacts/${id}`));
    assert.ok(!('gone' in evs[0].data.object.fields));

    // Every value is in the field's history, which unarchive shows again.
    const un = await rolodex(ctx(), ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'contact', '--key', 'gone']);
    assert.equal(un.code, 0, un.err);
    const h = await get(s, `/v1/contacts/${id}/fields/gone/history`);
    assert.deepEqual(
      h.data.map((x: { value: unknown }) => x.value),
      ['v3', 'v2', 'v1'],
    );
  });

  test('an import event body is the text JSON.stringify gives the event appendEvents builds', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    const octx = operatorCtx(db, s.workspaceId, { links: createHttpLinks('https://crm.test') });
    const defs = await requireDefinitions(octx, 'contact');
    const stored = { $name: { firstName: 'Ann "Q"', lastName: 'Lee\n\u2028' }, $email: ['a@x.test', 'b@x.test'] };
    const row = {
      id: 'con_json1',
      workspace_id: s.workspaceId,
      kind: 'contact',
      external_id: 'c"1',
      fields: JSON.stringify(stored),
      created_at: '2026-03-01T09:00:00.000Z',
      updated_at: '2026-03-02T09:00:00.000Z',
    };
    const changes = { $name: { from: null, to: stored.$name } };
    for (const rels of [undefined, new Map<string, string[]>(), new Map([['$account', ['acc_1', 'acc_2']]])]) {
      const json = resourceJson(octx, defs, row, stored, rels);
      assert.equal(json, JSON.stringify(toResource(octx, defs, row, rels)));
      await write(db, async (tx) => {
        const t = { ...octx, db: tx };
        await appendEvents(t, [{ type: 'contact.updated', object: JSON.parse(json), changes }], () => `evt_a${rels?.size ?? 'u'}`);
        await appendEventsJson(t, [{ type: 'contact.updated', objectId: row.id, json, changes }], () => `evt_b${rels?.size ?? 'u'}`);
      });
      const [a, b] = await db
        .selectFrom('events')
        .select(['id', 'body'])
        .where('id', 'in', [`evt_a${rels?.size ?? 'u'}`, `evt_b${rels?.size ?? 'u'}`])
        .orderBy('id')
        .execute();
      assert.equal(b!.body.replace('"evt_b', '"evt_a'), a!.body);
    }
  });
});
