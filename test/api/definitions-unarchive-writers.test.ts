// `rolodex definition unarchive` beside a write that puts back a record holding the field
// (docs/records.md §Correcting definitions), on PostgreSQL: a restore from the trash and an import
// creating the record read the definitions with the field archived, so they write the record's
// value index without it, and unarchive, reading the records holding the field, cannot find a
// record not yet committed. Either way the value must end up found by filters and kept unique.
// (SQLite has one writer: neither write overlaps an unarchive.)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Tx, write } from '../../src/db/index.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { lockRecords } from '../../src/records/repository.ts';
import { setArchived } from '../../src/records/service.ts';
import { buildTestApp, call, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { asksNow, waiterOf } from '../helpers/pg-locks.ts';

type Run = ReturnType<typeof rolodex>;

/**
 * Runs `writer` while the accounts' listing is held, so that it stops once it read the
 * definitions, then `rolodex definition unarchive` of `code`; lets the writer go once the
 * unarchive ended or waits for the writer.
 */
async function beside(t: TestApp, s: Seeded, writer: () => Run): Promise<[Awaited<Run>, Awaited<Run>]> {
  let written: Run | undefined;
  let unarchive: Run | undefined;
  await write(t.deps.db.kysely, async (tx: Tx) => {
    await lockRecords(tx, s.workspaceId, 'account');
    await sql`select 1`.execute(tx);
    written = writer();
    const stopped = await waiterOf(tx);
    assert.ok(stopped, 'the writer waits for the listing');
    unarchive = rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'account', '--key', 'code']);
    let ended = false;
    void unarchive.finally(() => (ended = true));
    for (let i = 0; i < 200 && !ended; i++) {
      await sql`select pg_stat_clear_snapshot()`.execute(tx);
      const waiting = await sql`select 1 from pg_stat_activity a where ${stopped.pid}::int = any(pg_blocking_pids(a.pid))`.execute(tx);
      if (waiting.rows.length > 0 || (await asksNow(tx, `definitions/${s.workspaceId}`))) break;
      await wait(50);
    }
  });
  return [await written!, await unarchive!];
}

/** The record holding code x-1 is found by its filter, and x-1 is refused to another record. */
async function indexedAndUnique(t: TestApp, s: Seeded, id: string): Promise<void> {
  const found = (await call(t, s.secret, 'GET', '/v1/accounts?code=x-1')).json();
  const taken = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'X-1' } });
  assert.deepEqual(
    { found: found.data.map((r: { id: string }) => r.id), taken: [taken.statusCode, taken.json().error?.code] },
    { found: [id], taken: [409, 'duplicate_value'] },
  );
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`unarchive beside a write that puts back a record holding the field [${dialect}]`, () => {
    async function setUp(t: TestApp): Promise<Seeded> {
      const s = await seedWorkspace(t);
      const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
      await addField(op, { objectType: 'account', key: 'code', label: 'code', valueType: 'TEXT', unique: true });
      return s;
    }
    const archive = (t: TestApp, s: Seeded) =>
      write(t.deps.db.kysely, (tx) => setArchived({ ...operatorCtx(tx, s.workspaceId), db: tx }, { objectType: 'account', key: 'code', archived: true }));

    test('a restore that read the definitions before the unarchive leaves the value indexed and unique', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await setUp(t);
        const a = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', code: 'x-1' } })).json();
        await archive(t, s);
        assert.equal((await call(t, s.secret, 'DELETE', `/v1/accounts/${a.id}`)).statusCode, 200);
        const [restored, unarchived] = await beside(t, s, () => rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id]));
        assert.equal(restored.code, 0, restored.err);
        assert.equal(unarchived.code, 0, unarchived.err);
        await indexedAndUnique(t, s, a.id);
      } finally {
        await t.close();
      }
    });

    test('an import creating a record that read the definitions before the unarchive leaves the value indexed and unique', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await setUp(t);
        await archive(t, s);
        const file = join(t.tdb.dataDir, `archived-${s.workspaceId}.ndjson`);
        const line = { object: 'account', externalId: 'a-1', fields: { $name: { value: 'A' } }, archivedFields: { code: { value: 'x-1', valueType: 'TEXT' } } };
        writeFileSync(file, JSON.stringify(line));
        const [imported, unarchived] = await beside(t, s, () => rolodex(t, ['import', '--workspace', s.workspaceId, file, '--commit', 'atomic', '--json']));
        assert.equal(imported.code, 0, imported.err);
        assert.equal(unarchived.code, 0, unarchived.err);
        const [a] = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data as { id: string }[];
        await indexedAndUnique(t, s, a!.id);
      } finally {
        await t.close();
      }
    });
  });
