// An API write that PostgreSQL picks as a deadlock's victim is run again, not answered 500
// (docs/design.md §Database, "A conflict between transactions"). The case: an atomic import that
// changes the members of an existing list holds that list from its first write of members and
// takes the contacts' listing only at its end (docs/pages.md §Long transactions); an API delete of
// a member takes the listing first, then waits for the list. Each then waits for the other, and
// after `deadlock_timeout` PostgreSQL cancels the delete, which waited first. Run again, the
// delete waits for the import's commit and succeeds; the import is not disturbed.
import assert from 'node:assert/strict';
import { setTimeout as wait } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { importKinds } from '../../src/cli/import-kinds.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

const contact = (i: number) =>
  JSON.stringify({ object: 'contact', externalId: `c-${i}`, fields: { $name: { value: { firstName: 'Ann', lastName: `L${i}` } } } });
const list = (members: string[]) => JSON.stringify({ object: 'list', externalId: 'l-1', name: 'Hot', objectType: 'contact', members });
/** The import's kinds, the lists' running `after` once their members are written (the list then held by the import). */
function kindsWithHook(after: (importPid: number) => Promise<void>): ImportKind[] {
  return importKinds().map((k) =>
    k.object !== 'list'
      ? k
      : {
          ...k,
          link: async (ctx, items) => {
            await k.link!(ctx, items);
            await after((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(ctx.db)).rows[0]!.pid);
          },
        },
  );
}

/** Waits until another backend waits for a lock that backend `pid` holds (10 s at most). */
async function untilBlockedBy(pid: number): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    for (let i = 0; i < 200; i++) {
      const r = await c.query('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid]);
      if (r.rows[0].n > 0) return;
      await wait(50);
    }
    throw new Error('the delete never waited for the import');
  } finally {
    await c.end();
  }
}

// SQLite has one writer at a time: no transaction waits for another's lock while holding one.
for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`an API write cancelled by a deadlock [${dialect}]`, () => {
    test('a delete of a list member, deadlocked with an import that changes the list, succeeds once the import commits', async () => {
      const app = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(app);
        const ws = operatorCtx(app.deps.db.kysely, s.workspaceId);
        await runImport(ws, {
          kinds: importKinds(),
          text: [0, 1, 2, 3]
            .map(contact)
            .concat(list(['c-0', 'c-1', 'c-2']))
            .join('\n'),
        });
        const c1 = (await sql<{ id: string }>`select id from records where workspace_id = ${s.workspaceId} and external_id = 'c-1'`.execute(app.deps.db.kysely))
          .rows[0]!.id;

        let deleted: Promise<{ statusCode: number; body: string }> | undefined;
        const text = [4, 5, 6]
          .map(contact)
          .concat(list(['c-0', 'c-1', 'c-3', 'c-4']))
          .join('\n');
        const report = await runImport(ws, {
          kinds: kindsWithHook(async (importPid) => {
            deleted = call(app, s.secret, 'DELETE', `/v1/contacts/${c1}`);
            // The delete holds the contacts' listing and waits for the list, which the import holds.
            // Until then: the delete must wait first, so that its deadlock check runs first.
            await untilBlockedBy(importPid);
          }),
          text,
          commit: 'atomic',
        });
        assert.ok(report);
        const r = await deleted!;
        assert.equal(r.statusCode, 200, r.body);

        const contacts = await call(app, s.secret, 'GET', '/v1/contacts?limit=25');
        assert.equal(contacts.json().totalCount, 6);
        const lists = await call(app, s.secret, 'GET', '/v1/lists?limit=25');
        const l1 = lists.json().data[0];
        const members = await call(app, s.secret, 'GET', `/v1/lists/${l1.id}/contacts?limit=25`);
        assert.equal(members.statusCode, 200, members.body);
        assert.deepEqual(
          members
            .json()
            .data.map((m: { externalId: string }) => m.externalId)
            .sort(),
          ['c-0', 'c-3', 'c-4'],
        );
      } finally {
        await app.close();
      }
    });
  });
