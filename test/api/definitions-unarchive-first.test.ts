// `rolodex definition unarchive` under way while writes that put back records holding the field
// start (docs/records.md §Correcting definitions), on PostgreSQL: the unarchive holds the
// definitions lock until it commits, so a restore from the trash and an import wait for it and
// then write with the field shown. The restored record and the one an import creates with the
// field under `fields` are found by its filter and keep it unique; a line still holding it under
// `archivedFields` is refused, as after an unarchive that committed first (docs/import.md
// §`account`, `contact`, `opportunity`). (SQLite has one writer: no write overlaps an unarchive.)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Tx, write } from '../../src/db/index.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { recordRows } from '../../src/records/repository.ts';
import { setArchived } from '../../src/records/service.ts';
import { buildTestApp, call, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

type Run = ReturnType<typeof rolodex>;

/** Waits (10 s at most) until `n` backends wait for backend `pid`'s locks. */
async function waitersOf(tx: Tx, pid: number, n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < 200 && count < n; i++) {
    await sql`select pg_stat_clear_snapshot()`.execute(tx);
    const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity a where ${pid}::int = any(pg_blocking_pids(a.pid))`.execute(tx);
    count = r.rows[0]!.n;
    if (count < n) await wait(50);
  }
  return count;
}

/**
 * Runs `rolodex definition unarchive` of `code` while the record `heldId` (which holds the field)
 * is locked here, so that it stops inside its transaction, holding the definitions lock; then
 * starts `writers`, and lets the unarchive go once each of them waits for it.
 */
async function unarchiveFirst(t: TestApp, s: Seeded, heldId: string, writers: (() => Run)[]): Promise<[Awaited<Run>, Awaited<Run>[]]> {
  let unarchive: Run | undefined;
  let started: Run[] = [];
  try {
    await write(t.deps.db.kysely, async (tx: Tx) => {
      await recordRows(tx, [heldId], { lock: true });
      unarchive = rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'account', '--key', 'code']);
      const stopped = await waiterOf(tx);
      assert.ok(stopped, 'the unarchive waits for the record held here');
      started = writers.map((w) => w());
      assert.equal(await waitersOf(tx, stopped.pid, writers.length), writers.length, 'every writer waits for the unarchive');
    });
  } finally {
    // Ended before the test closes the database, also when a check above failed.
    await Promise.allSettled([unarchive, ...started]);
  }
  return [await unarchive!, await Promise.all(started)];
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`writes that put back a record holding the field, beside an unarchive under way [${dialect}]`, () => {
    test('a restore and an import wait for the unarchive, then index the field and keep it unique', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
        await addField(op, { objectType: 'account', key: 'code', label: 'code', valueType: 'TEXT', unique: true });
        const created = async (name: string, code: string) =>
          (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name, code } })).json<{ id: string }>();
        const held = await created('Held', 'h-1');
        const a = await created('A', 'x-1');
        await write(t.deps.db.kysely, (tx) =>
          setArchived({ ...operatorCtx(tx, s.workspaceId), db: tx }, { objectType: 'account', key: 'code', archived: true }),
        );
        assert.equal((await call(t, s.secret, 'DELETE', `/v1/accounts/${a.id}`)).statusCode, 200);
        const file = (name: string, line: object) => {
          const path = join(t.tdb.dataDir, `${name}-${s.workspaceId}.ndjson`);
          writeFileSync(path, JSON.stringify({ object: 'account', ...line }));
          return path;
        };
        const shown = file('shown', { externalId: 'c-1', fields: { $name: { value: 'C' }, code: { value: 'z-1' } } });
        const hidden = file('hidden', { externalId: 'd-1', fields: { $name: { value: 'D' } }, archivedFields: { code: { value: 'w-1', valueType: 'TEXT' } } });
        const imported = (path: string) => () => rolodex(t, ['import', '--workspace', s.workspaceId, path, '--commit', 'atomic', '--json']);

        const [unarchived, [restored, shownRun, hiddenRun]] = await unarchiveFirst(t, s, held.id, [
          () => rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id]),
          imported(shown),
          imported(hidden),
        ]);
        assert.equal(unarchived.code, 0, unarchived.err);
        assert.equal(restored!.code, 0, restored!.err);
        assert.equal(shownRun!.code, 0, shownRun!.err);
        assert.notEqual(hiddenRun!.code, 0, 'a line holding a shown field under archivedFields is refused');
        assert.match(hiddenRun!.err + hiddenRun!.out, /archivedFields\.code.*it is shown, and its values go under fields/);

        const ids = async (query: string) => ((await call(t, s.secret, 'GET', `/v1/accounts?${query}`)).json().data as { id: string }[]).map((r) => r.id);
        const c = await ids('code=z-1');
        assert.equal(c.length, 1, 'the imported record is found by its filter');
        assert.deepEqual(
          { restored: await ids('code=x-1'), held: await ids('code=h-1'), refused: await ids('code=w-1') },
          { restored: [a.id], held: [held.id], refused: [] },
        );
        for (const code of ['X-1', 'Z-1', 'H-1']) {
          const taken = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B', code } });
          assert.deepEqual([code, taken.statusCode, taken.json().error?.code], [code, 409, 'duplicate_value'], taken.body);
        }
      } finally {
        await t.close();
      }
    });
  });
