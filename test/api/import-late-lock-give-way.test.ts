// An atomic import's late locks in a circle with an API write (docs/pages.md §Long transactions;
// docs/import.md §Sharing the database). By its end the import holds the rows it updated, locked by
// its reads; an API write that took a type's listing and then waits for one of those rows (a
// delete or a merge of a contact the import updated; a create of a contact that links to an
// account the import updated, which moves the account's `updatedAt`) waits for the import, and the import,
// asking for that listing exclusively just before COMMIT, waits for the write. PostgreSQL checks a
// wait for a deadlock once, `deadlock_timeout` (1 s) after it began: the write waited longer, so
// the import's check finds the circle and PostgreSQL cancels the import. The import gives way
// instead of failing: it asks again until the write's statement timeout cancels the write, which
// answers 503 with `Retry-After`. The test pauses the import before its end until the write has
// waited 1.2 s. SQLite has one writer: the import runs, then the write.
import assert from 'node:assert/strict';
import { setTimeout as wait } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { openDb } from '../../src/db/database.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import type { Db } from '../../src/db/types.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { checkEntries } from '../helpers/rank.ts';

const contact = (i: number, last: string, account?: string) => ({
  object: 'contact',
  externalId: `c-${i}`,
  fields: { $name: { value: { firstName: 'Ann', lastName: last } } },
  ...(account ? { relationships: { $account: { values: [account] } } } : {}),
});
const account = (i: number, name: string) => ({ object: 'account', externalId: `a-${i}`, fields: { $name: { value: name } } });
const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n');
type Answer = Awaited<ReturnType<typeof call>>;

for (const dialect of testDialects())
  describe(`an atomic import's late locks in a circle with an API write [${dialect}]`, () => {
    let app: TestApp | undefined;
    let served: Db | undefined;
    const t = () => app as TestApp;
    before(async () => {
      app = await buildTestApp(dialect, {
        env: { DATABASE_STATEMENT_TIMEOUT_MS: '4000' },
        // The server's connections carry its statement timeout; the import's (the test database's)
        // none, as the CLI's.
        deps: (deps, config) => {
          if (!config.databaseUrl) return;
          served = openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, statementTimeoutMs: config.databaseStatementTimeoutMs });
          deps.db = served;
          deps.auth = new Authenticator(served);
        },
      });
    });
    after(async () => {
      await app?.close();
      await served?.close();
    });

    /**
     * Imports `lines` atomically and sends `request` while the import pauses before its end; on
     * PostgreSQL the import goes on once the request has waited for it 1.2 s. The import's error,
     * if any, and the request's answer.
     */
    async function circle(ws: string, lines: object[], request: () => Promise<Answer>): Promise<{ failed: unknown; answer: Answer }> {
      const db = t().deps.db.kysely;
      const importing = (kinds: ImportKind[], extra: object[] = []) =>
        runImport(operatorCtx(t().tdb.db.kysely, ws), { kinds, text: ndjson([...lines, ...extra]), commit: 'atomic' }).then(
          () => undefined,
          (err: unknown) => err ?? 'failed',
        );
      if (dialect === 'sqlite') return { failed: await importing(importKinds()), answer: await request() };
      let go!: () => void;
      const gate = new Promise<void>((ok) => (go = ok));
      let paused!: (pid: number) => void;
      const atPause = new Promise<number>((ok) => (paused = ok));
      // Written last, in the import's transaction: it names the import's backend and waits.
      const pause: ImportKind = {
        object: 'pause',
        check: () => ({}),
        lookup: async () => new Map(),
        upsert: async (ctx) => {
          paused((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(ctx.db)).rows[0]!.pid);
          await gate;
        },
      };
      const imported = importing([...importKinds(), pause], [{ object: 'pause', externalId: 'p' }]);
      const pid = await atPause;
      const answered = request();
      let waited = 0;
      for (let i = 0; i < 200 && waited < 1200; i++) {
        await wait(25);
        const r = await sql<{ ms: number | null }>`select extract(epoch from clock_timestamp() - min(l.waitstart)) * 1000 as ms
          from pg_locks l where not l.granted and ${pid}::int = any(pg_blocking_pids(l.pid))`.execute(db);
        waited = Number(r.rows[0]?.ms ?? 0);
      }
      assert.ok(waited >= 1200, 'the request waits for the import');
      go();
      return { failed: await imported, answer: await answered };
    }

    /** Every contact and account listing counts its rows, as its first page says. */
    async function counted(ws: string, secret: string) {
      await rankUpkeepSettled();
      for (const [kind, path] of [
        ['contact', '/v1/contacts'],
        ['account', '/v1/accounts'],
      ] as const) {
        const { total } = await checkEntries(t().tdb.db.kysely, RECORDS, [ws, kind]);
        const page = await call(t(), secret, 'GET', `${path}?limit=1`);
        assert.equal(page.json().totalCount, total, kind);
      }
    }

    /** The request gave way (503, Retry-After) or ran after the import (`done`); sent again, it succeeds. */
    async function gaveWay(answer: Answer, done: number, again: () => Promise<Answer>): Promise<void> {
      if (answer.statusCode === done) return;
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.json().error.code, 'service_unavailable');
      assert.equal(answer.headers['retry-after'], '1');
      const second = await again();
      assert.equal(second.statusCode, done, second.body);
    }

    test('a delete of a contact the import updated: the import writes every row, the delete gives way', async () => {
      const s = await seedWorkspace(t());
      const ws = s.workspaceId;
      await runImport(operatorCtx(t().tdb.db.kysely, ws), { kinds: importKinds(), text: ndjson([contact(0, 'A')]) });
      const id = (await sql<{ id: string }>`select id from records where workspace_id = ${ws} and external_id = 'c-0'`.execute(t().tdb.db.kysely)).rows[0]!.id;
      const del = () => call(t(), s.secret, 'DELETE', `/v1/contacts/${id}`);

      const { failed, answer } = await circle(ws, [contact(0, 'B'), contact(1, 'C')], del);
      assert.equal(failed, undefined, String(failed));
      const kept = answer.statusCode === 503;
      if (kept) {
        // Nothing of the delete was written: the contact is there, as the import left it.
        const one = await call(t(), s.secret, 'GET', `/v1/contacts/${id}`);
        assert.equal(one.statusCode, 200, one.body);
        assert.equal(one.json().fields.$name.value.lastName, 'B');
      }
      await gaveWay(answer, 200, del);
      const after = await call(t(), s.secret, 'GET', '/v1/contacts?limit=25');
      assert.deepEqual(
        after.json().data.map((c: { externalId: string }) => c.externalId),
        ['c-1'],
      );
      await counted(ws, s.secret);
    });

    test('a merge into another contact of a contact the import updated: the import writes every row, the merge gives way', async () => {
      const s = await seedWorkspace(t());
      const ws = s.workspaceId;
      await runImport(operatorCtx(t().tdb.db.kysely, ws), { kinds: importKinds(), text: ndjson([contact(0, 'A'), contact(2, 'Keep')]) });
      const idOf = async (ext: string) =>
        (await sql<{ id: string }>`select id from records where workspace_id = ${ws} and external_id = ${ext}`.execute(t().tdb.db.kysely)).rows[0]!.id;
      const [duplicate, primary] = [await idOf('c-0'), await idOf('c-2')];
      const merge = () => call(t(), s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary, duplicateId: duplicate });

      const { failed, answer } = await circle(ws, [contact(0, 'B'), contact(1, 'C')], merge);
      assert.equal(failed, undefined, String(failed));
      await gaveWay(answer, 200, merge);
      const after = await call(t(), s.secret, 'GET', '/v1/contacts?limit=25');
      assert.deepEqual(
        after
          .json()
          .data.map((c: { externalId: string }) => c.externalId)
          .sort(),
        ['c-1', 'c-2'],
      );
      await counted(ws, s.secret);
    });

    test('a create that links to an account the import updated: the import writes every row, the create gives way', async () => {
      const s = await seedWorkspace(t());
      const ws = s.workspaceId;
      await runImport(operatorCtx(t().tdb.db.kysely, ws), { kinds: importKinds(), text: ndjson([account(0, 'Acme')]) });
      const acc = (await sql<{ id: string }>`select id from records where workspace_id = ${ws} and external_id = 'a-0'`.execute(t().tdb.db.kysely)).rows[0]!.id;
      const create = () =>
        call(t(), s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bo', lastName: 'API' } }, relationships: { $account: acc } });

      const { failed, answer } = await circle(ws, [account(0, 'Acme Inc'), contact(1, 'C', 'a-0')], create);
      assert.equal(failed, undefined, String(failed));
      await gaveWay(answer, 200, create);
      const after = await call(t(), s.secret, 'GET', '/v1/contacts?limit=25');
      assert.deepEqual(
        after
          .json()
          .data.map((c: { fields: { $name: { value: { lastName: string } } } }) => c.fields.$name.value.lastName)
          .sort(),
        ['API', 'C'],
      );
      const one = await call(t(), s.secret, 'GET', `/v1/accounts/${acc}`);
      assert.equal(one.json().fields.$name.value, 'Acme Inc');
      await counted(ws, s.secret);
    });
  });
