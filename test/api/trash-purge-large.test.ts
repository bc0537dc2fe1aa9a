// A purge of the whole trash of a workspace holding a great many entries (docs/trash.md §Purge),
// on both databases: the ids are searched for in one pass, whatever their number, and the purge
// erases and counts every entry, where more ids than a call can take as arguments once stopped it
// with a RangeError (`Maximum call stack size exceeded`) before it erased anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const ENTRIES = 200_000;

eachDialect('trash purge of a great many entries', (ctx) => {
  test(`rolodex trash purge erases ${ENTRIES} entries`, { timeout: 180_000 }, async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const db = t.deps.db.kysely;
    // Entries of accounts deleted with nothing held: only their number matters here.
    const numbers =
      t.dialect === 'postgres'
        ? sql`select n from generate_series(1, ${ENTRIES}) as n`
        : sql`select n from (with recursive c(n) as (select 1 union all select n + 1 from c where n < ${ENTRIES}) select n from c)`;
    const id = t.dialect === 'postgres' ? sql`'acc_' || lpad(n::text, 22, '0')` : sql`'acc_' || substr('0000000000000000000000' || n, -22)`;
    await sql`insert into trash (id, workspace_id, object_type, deleted_at, merged_into, resource, payload)
      select ${id}, ${s.workspaceId}, 'account', '2026-01-01T00:00:00.000Z', null, '{}', '{}' from (${numbers}) as g`.execute(db);

    const purged = await rolodex(t, ['trash', 'purge', '--workspace', s.workspaceId, '--json']);
    assert.equal(purged.code, 0, purged.err);
    assert.equal((JSON.parse(purged.out) as { records: number }).records, ENTRIES);
    const left = await db
      .selectFrom('trash')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', s.workspaceId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });
});
