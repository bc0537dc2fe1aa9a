// The events of every resource type (docs/events.md §Types, §Shape), on both databases: a create,
// an update, a delete and a restore of an account, a contact, an opportunity, a task, a note, a
// meeting, a list and a custom object's record each append `<type>.created`, `.updated`,
// `.deleted` and `.restored`, with the resource as the API answered it; an update that changes
// nothing and a second delete append nothing. A merge of each mergeable type appends one
// `<type>.merged`. The actor names the user, the workspace key or the operator.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { eventTypes } from '../../src/changes/event-types.ts';
import { write } from '../../src/db/write.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { meetingBody } from '../helpers/meetings.ts';

eachDialect('events of every resource type', (ctx) => {
  async function events(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body));
  }
  async function ok(secret: string, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function withProject(s: Seeded) {
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    await addField(op, { objectType: 'project', key: 'code', label: 'Code', valueType: 'TEXT' });
    return ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Base' } });
  }

  test('created, updated, deleted and restored, each with the resource as the API answered it', async () => {
    const s = await seedWorkspace(ctx());
    const base = await withProject(s);
    const cases: [string, string, unknown, unknown][] = [
      ['account', '/v1/accounts', { fields: { $name: 'A' } }, { fields: { $name: 'B' } }],
      ['contact', '/v1/contacts', { fields: { $email: ['a@x.test'] } }, { fields: { $email: ['b@x.test'] } }],
      ['opportunity', '/v1/opportunities', { fields: { $name: 'O', $stage: 'Lead' }, relationships: { $account: base.id } }, { fields: { $name: 'P' } }],
      ['task', '/v1/tasks', { fields: { $title: 'T', $status: 'TODO' }, relationships: { $assignedTo: s.userId } }, { fields: { $title: 'U' } }],
      ['note', '/v1/notes', { fields: { $title: 'N' } }, { fields: { $title: 'M' } }],
      ['meeting', '/v1/meetings', meetingBody({ $title: 'X' }), { fields: { $privacySetting: 'FULL' } }],
      ['list', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' } }, { fields: { $name: 'K' } }],
      ['project', '/v1/objects/project/values', { fields: { name: 'A' } }, { fields: { name: 'B' } }],
    ];
    const written = new Set<string>();
    for (const [type, path, create, update] of cases) {
      const seen = (await events(s.workspaceId)).length;
      const created = await ok(s.secret, 'POST', path, create);
      const updated = await ok(s.secret, 'POST', `${path}/${created.id}`, update);
      await ok(s.secret, 'POST', `${path}/${created.id}`, update);
      const deleted = await ok(s.secret, 'DELETE', `${path}/${created.id}`);
      await ok(s.secret, 'DELETE', `${path}/${created.id}`);
      await write(ctx().deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: created.id }));
      const restored = await ok(s.secret, 'GET', `${path}/${created.id}`);
      const evs = (await events(s.workspaceId)).slice(seen);
      for (const e of evs) written.add(e.type);
      assert.deepEqual(
        evs.map((e) => e.type),
        [`${type}.created`, `${type}.updated`, `${type}.deleted`, `${type}.restored`],
        type,
      );
      assert.deepEqual(
        evs.map((e) => e.data.object),
        [created, updated, deleted, restored],
        type,
      );
      assert.ok(Object.keys(evs[1].data.changes).length > 0, `${type}: an update names what it changed`);
      for (const e of evs) {
        assert.match(e.id, /^evt_/);
        assert.equal(e.workspaceId, s.workspaceId);
        assert.equal(new Date(e.occurredAt).toISOString(), e.occurredAt);
      }
      assert.deepEqual(
        evs.map((e) => e.actor),
        [...Array(3).fill({ type: 'user', id: s.userId }), { type: 'operator', id: null }],
        type,
      );
    }
    // The catalogue webhook subscriptions are checked against (docs/events.md §Webhooks) lists
    // exactly the lifecycle types written.
    assert.deepEqual(
      [...written].sort(),
      eventTypes(['project'])
        .filter((t) => /\.(created|updated|deleted|restored)$/.test(t))
        .sort(),
    );
  });

  test('a merge of each mergeable type appends one <type>.merged; a workspace key is the actor', async () => {
    const s = await seedWorkspace(ctx());
    const base = await withProject(s);
    const key = await createKey(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { userId: null, scopes: null, expiresInMs: null });
    const cases = [
      ['account', '/v1/accounts', { fields: { $name: 'A' } }, { fields: { $name: 'B', $website: ['https://b.test'] } }],
      ['contact', '/v1/contacts', { fields: {} }, { fields: { $email: ['d@x.test'] } }],
      [
        'opportunity',
        '/v1/opportunities',
        { fields: { $name: 'A', $stage: 'Lead' }, relationships: { $account: base.id } },
        { fields: { $name: 'B', $stage: 'Lead' }, relationships: { $account: base.id } },
      ],
      ['project', '/v1/objects/project', { fields: { name: 'A' } }, { fields: { name: 'B', code: 'c' } }],
    ] as const;
    for (const [type, path, primary, duplicate] of cases) {
      const values = type === 'project' ? `${path}/values` : path;
      const p = await ok(key.secret, 'POST', values, primary);
      const d = await ok(key.secret, 'POST', values, duplicate);
      const seen = (await events(s.workspaceId)).length;
      const out = await ok(key.secret, 'POST', `${path}/merge`, { primaryId: p.id, duplicateId: d.id });
      const merged = (await events(s.workspaceId)).slice(seen).filter((e) => e.type.endsWith('.merged'));
      assert.deepEqual(
        merged.map((e) => [e.type, e.data.duplicateId, e.actor]),
        [[`${type}.merged`, d.id, { type: 'workspace_key', id: key.id }]],
        type,
      );
      assert.deepEqual(merged[0].data.object, out.primary, type);
      assert.equal(typeof merged[0].data.changes, 'object', type);
    }
    // Exactly these are the merges the catalogue lists (tasks, notes, meetings, lists have none).
    assert.deepEqual(
      eventTypes(['project']).filter((t) => t.endsWith('.merged')),
      cases.map(([type]) => `${type}.merged`),
    );
  });
});
