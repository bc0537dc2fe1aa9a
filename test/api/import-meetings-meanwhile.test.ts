// A re-import of meetings beside an API update of one of them (docs/import.md §Sharing the
// database, docs/meetings.md §Writes). The import reads the meetings it rewrites locked, so on
// PostgreSQL an update that commits while the import waits is read by it: the import's event names
// the update's values as its `from`, and keeps the transcript the update gave (a line that names
// none keeps the meeting's). Played deterministically: another transaction holds meeting A's row
// while the import, whose chunk rewrites A then B, waits for it; B is updated through the API
// meanwhile, then A is let go. On SQLite, one writer at a time, the update comes before the import.
//
// The import takes the workspace's meetings listing before it locks any row, as a delete does
// (docs/meetings.md §Writes, "The order of locks"): a delete of a meeting the import holds, sent
// while the import waits for another, waits for the import's commit, and neither is cancelled as a
// deadlock and run again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { type Tx, write } from '../../src/db/index.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { transcript } from '../helpers/meetings.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

const line = (externalId: string, title: string, privacy: string | null) => ({
  object: 'meeting',
  externalId,
  fields: {
    $title: { value: title },
    $startDate: { value: '2025-01-10T09:00:00Z' },
    $endDate: { value: '2025-01-10T09:30:00Z' },
    $privacySetting: { value: privacy },
  },
});

async function importLines(t: TestApp, s: Seeded, lines: object[]): Promise<void> {
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  const commit = t.dialect === 'postgres' ? 'atomic' : 'batched';
  await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text, commit });
}

const RERUN = 'the transaction was cancelled by a conflict with another; running it again';

type Event = { type: string; data: { object: Shown; changes?: Record<string, { from: unknown; to: unknown }> } };
type Shown = { id: string; fields: Record<string, { value: unknown }>; relationships: { $transcript: { values: string[] } } };

type Meeting = { id: string; external_id: string };

/** The workspace's meetings in id order. */
async function meetingsOf(t: TestApp, s: Seeded): Promise<Meeting[]> {
  const db = t.deps.db.kysely;
  return db.selectFrom('meetings').select(['id', 'external_id']).where('workspace_id', '=', s.workspaceId).orderBy('id').execute() as Promise<Meeting[]>;
}

/** The meeting's events in the order they committed. */
async function eventsOf(t: TestApp, s: Seeded, id: string): Promise<Event[]> {
  const rows = await t.deps.db.kysely
    .selectFrom('events')
    .select('body')
    .where('workspace_id', '=', s.workspaceId)
    .where('object_id', '=', id)
    .orderBy('seq')
    .execute();
  return rows.map((r) => JSON.parse(r.body) as Event);
}

/** Each update's `from` is what the write before it left; returns the state the last one left. */
function replay(events: Event[]): Record<string, unknown> {
  const [created, ...updates] = events;
  assert.equal(created?.type, 'meeting.created');
  const state: Record<string, unknown> = Object.fromEntries(Object.entries(created.data.object.fields).map(([k, f]) => [k, f.value]));
  state.$transcript = created.data.object.relationships.$transcript.values;
  for (const [i, e] of updates.entries()) {
    assert.equal(e.type, 'meeting.updated');
    for (const [key, change] of Object.entries(e.data.changes ?? {})) {
      assert.deepEqual(change.from, state[key], `update ${i + 1} of ${events.length - 1}: ${key} changed from what the write before it left`);
      state[key] = change.to;
    }
  }
  return state;
}

eachDialect('a meeting import beside an API update of a meeting it rewrites', (ctx) => {
  test('the import reads the update that committed while it waited: no stale change, nothing lost', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await importLines(t, s, [line('m-1', 'One', null), line('m-2', 'Two', null)]);
    // A is the meeting of the lower id: the import's chunk, its line first, waits for it before B.
    const [a, b] = (await meetingsOf(t, s)) as [Meeting, Meeting];
    const file = await transcript(t, s.secret, 'what was said');
    const update = () =>
      call(t, s.secret, 'POST', `/v1/meetings/${b.id}`, { fields: { $privacySetting: 'METADATA' }, relationships: { $transcript: { replace: file } } });
    const reimport = () => importLines(t, s, [line(a.external_id, 'A again', 'FULL'), line(b.external_id, 'B again', 'FULL')]);

    if (t.dialect === 'postgres') {
      let importing: Promise<void> | undefined;
      let updating: ReturnType<typeof update> | undefined;
      await write(t.deps.db.kysely, async (tx: Tx) => {
        await sql`select id from meetings where id = ${a.id} for update`.execute(tx);
        importing = reimport();
        assert.ok(await waiterOf(tx), 'the import waits for meeting A');
        // The update may wait for the import (and then commit after it): A is let go after a while.
        updating = update();
        await Promise.race([updating, wait(1_500)]);
      });
      await importing;
      const updated = await (updating as ReturnType<typeof update>);
      assert.equal(updated.statusCode, 200, updated.body);
    } else {
      assert.equal((await update()).statusCode, 200);
      await reimport();
    }

    const events = await eventsOf(t, s, b.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['meeting.created', 'meeting.updated', 'meeting.updated'],
    );
    // The last committer's values are the meeting's; the transcript the update gave stays, since
    // the import's line names none and nothing removes one.
    const last = replay(events);
    const now = (await call(t, s.secret, 'GET', `/v1/meetings/${b.id}`)).json<Shown>();
    for (const key of ['$title', '$privacySetting']) assert.deepEqual(now.fields[key]?.value, last[key], key);
    assert.deepEqual(now.relationships.$transcript.values, last.$transcript);
    assert.deepEqual(last.$transcript, [file]);
    assert.equal(last.$title, 'B again');
    replay(await eventsOf(t, s, a.id));
  });

  test('a delete of a meeting the import holds waits for its commit: both succeed, none runs again', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await importLines(t, s, [line('m-1', 'One', null), line('m-2', 'Two', null), line('m-3', 'Three', null)]);
    const [a, b, c] = (await meetingsOf(t, s)) as [Meeting, Meeting, Meeting];
    const from = t.logs().length;
    // The chunk rewrites A, B and C, and creates a meeting.
    const lines = [a, b, c].map((m) => line(m.external_id, `${m.external_id} again`, 'FULL'));
    const reimport = () =>
      importLines(t, s, [...lines, line('m-4', 'Four', null)]).then(
        () => undefined,
        (err: unknown) => err,
      );
    const remove = () => call(t, s.secret, 'DELETE', `/v1/meetings/${b.id}`);
    let imported: unknown;
    let deleted: Awaited<ReturnType<typeof remove>>;
    if (t.dialect === 'postgres') {
      let importing!: Promise<unknown>;
      let deleting!: ReturnType<typeof remove>;
      await write(t.deps.db.kysely, async (tx: Tx) => {
        await sql`select id from meetings where id = ${c.id} for update`.execute(tx);
        importing = reimport();
        const waiting = await waiterOf(tx);
        assert.ok(waiting, 'the import waits for meeting C');
        deleting = remove();
        assert.ok(await waiterOf(tx, waiting.pid), 'the delete waits for the import');
      });
      [imported, deleted] = await Promise.all([importing, deleting]);
    } else {
      imported = await reimport();
      deleted = await remove();
    }
    assert.equal(imported, undefined, String(imported));
    assert.equal(deleted.statusCode, 200, deleted.body);
    // The delete came second: it took the meeting as the import left it.
    assert.equal(deleted.json<Shown>().fields.$title?.value, `${b.external_id} again`);
    const reruns = t
      .logs()
      .slice(from)
      .split('\n')
      .filter((l) => l.includes(RERUN) || l.includes('40P01') || l.includes('deadlock'));
    assert.deepEqual(reruns, []);
    const left = await sql<{ external_id: string }>`select external_id from meetings where workspace_id = ${s.workspaceId} order by external_id`.execute(
      t.deps.db.kysely,
    );
    assert.deepEqual(
      left.rows.map((m) => m.external_id),
      ['m-1', 'm-2', 'm-3', 'm-4'].filter((e) => e !== b.external_id),
    );
  });
});
