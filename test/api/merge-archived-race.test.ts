// A merge beside `rolodex definition archive` or `unarchive` of a unique field the duplicate holds
// and the primary does not (docs/merge.md §Fields, docs/records.md §Correcting definitions), on
// PostgreSQL, each first: stopped inside its transaction while the other starts. The one under way
// commits first, and the merge writes with the field as the first left it: shown in its answer,
// counted and named in its event only when shown then. Unarchive indexes the records holding the
// field, and a primary that takes the value from the duplicate held none before the merge
// committed; whichever order, once the field is shown the primary is found by the value and it
// stays unique. (SQLite has one writer: a merge never overlaps a definition write.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Tx, write } from '../../src/db/index.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { setArchived } from '../../src/records/service.ts';
import { buildTestApp, call, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { asksNow, waiterOf } from '../helpers/pg-locks.ts';

interface Setup {
  s: Seeded;
  /** A record holding the field, created before the others (so unarchive locks it first). */
  held: string;
  p: string;
  d: string;
  /** A list holding the duplicate: a merge locks it after it read the definitions. */
  list: string;
}

async function setUp(t: TestApp, archived: boolean): Promise<Setup> {
  const s = await seedWorkspace(t);
  await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'code', label: 'code', valueType: 'TEXT', unique: true });
  const ok = async (url: string, body: unknown) => {
    const res = await call(t, s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ id: string }>().id;
  };
  const held = await ok('/v1/accounts', { fields: { $name: 'Held', code: 'h-1' } });
  const p = await ok('/v1/accounts', { fields: { $name: 'P' } });
  const d = await ok('/v1/accounts', { fields: { $name: 'D', code: 'd-1' } });
  const list = await ok('/v1/lists', { fields: { $name: 'L', $objectType: 'account' }, relationships: { $accounts: [d] } });
  if (archived)
    await write(t.deps.db.kysely, (tx) => setArchived({ ...operatorCtx(tx, s.workspaceId), db: tx }, { objectType: 'account', key: 'code', archived: true }));
  return { s, held, p, d, list };
}

type Stop = (tx: Tx, u: Setup) => Promise<unknown>;
/** Stops a merge once it read the definitions: it waits for the duplicate's list. */
const listHeld: Stop = (tx, u) => sql`select id from lists where id = ${u.list} for update`.execute(tx);
/** Stops an unarchive while it locks the records holding the field, before the duplicate. */
const recordHeld: Stop = (tx, u) => sql`select id from records where id = ${u.held} for update`.execute(tx);
/** Stops an archive (or an unarchive) before it writes the field's row. */
const fieldHeld: Stop = (tx, u) => sql`select id from field_definitions where workspace_id = ${u.s.workspaceId} and key = 'code' for update`.execute(tx);

/**
 * Holds what `stop` locks, starts `first`, which stops on it, then `second`; lets `first` go once
 * `second` ended or waits for it.
 */
async function race<A, B>(t: TestApp, u: Setup, stop: Stop, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  let a: Promise<A> | undefined;
  let b: Promise<B> | undefined;
  await write(t.deps.db.kysely, async (tx) => {
    await stop(tx, u);
    a = first();
    const stopped = await waiterOf(tx);
    assert.ok(stopped, 'the first write stops on the lock held here');
    b = second();
    let ended = false;
    void b.finally(() => (ended = true));
    for (let i = 0; i < 200 && !ended; i++) {
      await sql`select pg_stat_clear_snapshot()`.execute(tx);
      const waiting = await sql`select 1 from pg_stat_activity a where ${stopped.pid}::int = any(pg_blocking_pids(a.pid))`.execute(tx);
      if (waiting.rows.length > 0 || (await asksNow(tx, `definitions/${u.s.workspaceId}`))) break;
      await wait(50);
    }
  });
  return [await a!, await b!];
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`a merge beside archive or unarchive of a field the duplicate holds [${dialect}]`, () => {
    const cases: { name: string; archived: boolean; op: 'archive' | 'unarchive'; mergeFirst: boolean; stop: Stop }[] = [
      { name: 'a merge under way, then unarchive', archived: true, op: 'unarchive', mergeFirst: true, stop: listHeld },
      { name: 'an unarchive under way, then a merge', archived: true, op: 'unarchive', mergeFirst: false, stop: recordHeld },
      { name: 'a merge under way, then archive', archived: false, op: 'archive', mergeFirst: true, stop: listHeld },
      { name: 'an archive under way, then a merge', archived: false, op: 'archive', mergeFirst: false, stop: fieldHeld },
    ];
    for (const c of cases)
      test(`${c.name}: the merge writes with the field as the first left it; once shown, the field finds the primary by the value it took, which stays unique`, async () => {
        const t = await buildTestApp(dialect);
        try {
          const u = await setUp(t, c.archived);
          const definition = () => rolodex(t, ['definition', c.op, '--workspace', u.s.workspaceId, '--type', 'account', '--key', 'code']);
          const merge = () => call(t, u.s.secret, 'POST', '/v1/accounts/merge', { primaryId: u.p, duplicateId: u.d });
          const [merged, defined] = c.mergeFirst
            ? await race(t, u, c.stop, merge, definition)
            : ((await race(t, u, c.stop, definition, merge)).reverse() as [Awaited<ReturnType<typeof merge>>, Awaited<ReturnType<typeof definition>>]);
          assert.equal(merged.statusCode, 200, merged.body);
          assert.equal(defined.code, 0, defined.err);
          // The one under way commits first, and the other then reads what it committed: the merge
          // writes with the field as the first left it, shown in its answer and counted only then.
          const shown = c.mergeFirst ? !c.archived : c.archived;
          const answer = merged.json<{ primary: { fields: Record<string, { value: unknown }> }; summary: { fieldWriteCount: number } }>();
          const event = (await t.deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', u.s.workspaceId).execute())
            .map((r) => JSON.parse(r.body) as { type: string; data: { changes: Record<string, unknown> } })
            .find((e) => e.type === 'account.merged');
          assert.deepEqual(
            { code: answer.primary.fields.code?.value ?? null, count: answer.summary.fieldWriteCount, changes: Object.keys(event?.data.changes ?? {}) },
            shown ? { code: 'd-1', count: 1, changes: ['code'] } : { code: null, count: 0, changes: [] },
          );
          if (c.op === 'archive') {
            const again = await rolodex(t, ['definition', 'unarchive', '--workspace', u.s.workspaceId, '--type', 'account', '--key', 'code']);
            assert.equal(again.code, 0, again.err);
          }
          const found = (await call(t, u.s.secret, 'GET', '/v1/accounts?code=d-1')).json().data as { id: string }[];
          const taken = await call(t, u.s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'D-1' } });
          assert.deepEqual(
            { found: found.map((r) => r.id), taken: [taken.statusCode, taken.json().error?.code] },
            { found: [u.p], taken: [409, 'duplicate_value'] },
          );
        } finally {
          await t.close();
        }
      });
  });
