// An API write appends its event and queues the event's deliveries in one statement on PostgreSQL
// (docs/design.md §Database statistics, docs/events.md §Storage): the insert is a data-modifying
// CTE of the statement that queues, which reads the new row from the CTE and never the events
// table, so its plan cannot turn into a scan of that table whatever its statistics say. On SQLite
// the two are two statements, each answered as it runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

eachDialect('event and deliveries statement', (ctx) => {
  test('POST /v1/lists: the list.created event and its delivery go out as one statement on PostgreSQL', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const db = t.deps.db.kysely;
    const hook = await addWebhook(operatorCtx(db, s.workspaceId), { url: 'https://hooks.example.test/in', events: ['list.created'], allowPrivate: false });
    const { result, statements } = await statementsOf(() => call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' } }));
    assert.equal(result.statusCode, 200, result.body);
    const events = statements.filter((x) => /^(with inserted as \()?insert into "events"/.test(x.trim()));
    const queued = statements.filter((x) => /insert into webhook_deliveries/.test(x));
    assert.equal(events.length, 1, statements.join('\n'));
    if (t.dialect === 'postgres') {
      assert.deepEqual(queued, events, 'the queueing is the event insert’s statement');
      assert.match(queued[0]!, /from inserted as e/, 'the queueing reads the new row from the insert, not from the events table');
    } else assert.equal(queued.length, 1);
    const id = result.json().id as string;
    const rows = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select(['d.subscription_id', 'e.type', 'e.object_id', 'd.event_seq', 'e.seq'])
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.subscription_id, r.type, r.object_id, Number(r.event_seq) === Number(r.seq)]),
      [[hook.id, 'list.created', id, true]],
    );
  });
});
