// `rolodex webhook list` names, per subscription, the types it takes that no event is written with
// (docs/events.md §Webhooks), on both databases: `add` refuses them, but a subscription stored
// before it did may still name one (`task.merged`) and never receive it. The types written are
// those of the subscription's own workspace, its custom object types included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

eachDialect('webhook list names the types never written', (ctx) => {
  /** A subscription as an earlier version stored it: its types were not checked. */
  async function stored(t: TestApp, id: string, workspaceId: string, types: string[]) {
    const db = t.deps.db.kysely;
    await db
      .insertInto('webhook_subscriptions')
      .values({
        id,
        workspace_id: workspaceId,
        url: 'https://hooks.example.com/in',
        description: null,
        secret: `whsec_${'A'.repeat(44)}`,
        all_events: 0,
        created_at: '2026-01-01T00:00:00.000Z',
        failing_since: null,
        last_error: null,
        disabled_at: null,
      })
      .execute();
    await db
      .insertInto('webhook_subscription_events')
      .values(types.map((type) => ({ subscription_id: id, type })))
      .execute();
  }

  test('a stored subscription naming a type never written is flagged, in text and JSON; one added now is not', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    await defineObjectType(operatorCtx(t.deps.db.kysely, s.workspaceId), { slug: 'project', label: 'Project' });
    const old = `whk_old_${s.workspaceId}`;
    await stored(t, old, s.workspaceId, ['contact.created', 'task.merged', 'list.merged', 'project.merged']);
    // `project` is a type of the first workspace only: the second's subscription waits for nothing.
    const elsewhere = `whk_old_${other.workspaceId}`;
    await stored(t, elsewhere, other.workspaceId, ['project.created', 'account.created']);
    const add = (...flags: string[]) =>
      rolodex(t, ['webhook', 'add', '--workspace', s.workspaceId, '--url', 'https://hooks.example.com/in', ...flags, '--json']);
    const fresh = JSON.parse((await add('--events', 'contact.created,project.merged')).out) as { id: string; neverWritten: string[] };
    assert.deepEqual(fresh.neverWritten, []);
    const all = JSON.parse((await add('--all')).out) as { id: string };

    const listed = await rolodex(t, ['webhook', 'list', '--workspace', s.workspaceId, '--json']);
    assert.equal(listed.code, 0, listed.err);
    const byId = new Map((JSON.parse(listed.out) as { id: string; neverWritten: string[] }[]).map((w) => [w.id, w.neverWritten]));
    assert.deepEqual(Object.fromEntries(byId), { [old]: ['list.merged', 'task.merged'], [fresh.id]: [], [all.id]: [] });

    const text = (await rolodex(t, ['webhook', 'list', '--workspace', s.workspaceId])).out.split('\n');
    const line = (id: string) => text.find((l) => l.startsWith(`${id}  `)) ?? assert.fail(`${id} is listed: ${text.join('\n')}`);
    assert.ok(line(old).endsWith('  events contact.created,list.merged,project.merged,task.merged  never written: list.merged,task.merged'), line(old));
    assert.doesNotMatch(line(fresh.id), /never written/);
    assert.doesNotMatch(line(all.id), /never written/);

    // Without --workspace, each subscription is judged by its own workspace's types.
    const every = JSON.parse((await rolodex(t, ['webhook', 'list', '--json'])).out) as { id: string; neverWritten: string[] }[];
    assert.deepEqual(every.find((w) => w.id === elsewhere)?.neverWritten, ['project.created']);
    assert.deepEqual(every.find((w) => w.id === old)?.neverWritten, ['list.merged', 'task.merged']);
  });
});
