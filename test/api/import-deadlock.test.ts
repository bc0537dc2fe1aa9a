// An atomic import that changes an existing list takes that list only under the listings' locks
// it takes at its end (docs/pages.md §Long transactions; src/lists/import.ts): a server's delete of
// a member, which takes the contacts' listing before the lists holding the contact, neither waits
// for the import nor deadlocks with it. Had the import held the list from its link step, the
// delete would wait for its commit (failing past the statement timeout on a long import), and at
// its end the import would wait for the listing the delete holds: one of the two cancelled.
import assert from 'node:assert/strict';
import { setTimeout as wait } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';

const contact = (i: number) =>
  JSON.stringify({ object: 'contact', externalId: `c-${i}`, fields: { $name: { value: { firstName: 'Ann', lastName: `L${i}` } } } });
const list = (members: string[]) => JSON.stringify({ object: 'list', externalId: 'l-1', name: 'Hot', objectType: 'contact', members });
/** The import's kinds, the lists' running `after` once their link step is done. */
function kindsWithHook(after: () => Promise<void>): ImportKind[] {
  return importKinds().map((k) =>
    k.object !== 'list'
      ? k
      : {
          ...k,
          link: async (ctx, items) => {
            await k.link!(ctx, items);
            await after();
          },
        },
  );
}

type Answer = { statusCode: number; body: string };
/** The answer, or a failure naming `what` when there is none within 5 s. */
async function within(what: string, answer: Promise<Answer>): Promise<Answer> {
  const late = wait(5000, undefined, { ref: false }).then(() => {
    throw new Error(`${what} waited for the import`);
  });
  return Promise.race([answer, late]);
}

// SQLite has one writer at a time, which an import beside a server takes chunk by chunk.
for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`an import that changes an existing list, beside deletes of its members [${dialect}]`, () => {
    /** A workspace with contacts c-0…c-3 and the list l-1 of c-0, c-1, c-2, imported. */
    async function setUp(app: Awaited<ReturnType<typeof buildTestApp>>) {
      const s = await seedWorkspace(app);
      const ws = operatorCtx(app.deps.db.kysely, s.workspaceId);
      await runImport(ws, {
        kinds: importKinds(),
        text: [0, 1, 2, 3]
          .map(contact)
          .concat(list(['c-0', 'c-1', 'c-2']))
          .join('\n'),
      });
      const idOf = async (ext: string) =>
        (await sql<{ id: string }>`select id from records where workspace_id = ${s.workspaceId} and external_id = ${ext}`.execute(app.deps.db.kysely)).rows[0]!
          .id;
      // The re-import adds c-4…c-6, keeps c-0 and c-1 in the list, drops c-2 and adds c-3 and c-4.
      const text = [4, 5, 6]
        .map(contact)
        .concat(list(['c-0', 'c-1', 'c-3', 'c-4']))
        .join('\n');
      return { s, ws, idOf, text };
    }
    const members = async (app: Awaited<ReturnType<typeof buildTestApp>>, secret: string) => {
      const lists = await call(app, secret, 'GET', '/v1/lists?limit=25');
      const l1 = lists.json().data[0];
      const page = await call(app, secret, 'GET', `/v1/lists/${l1.id}/contacts?limit=25`);
      assert.equal(page.statusCode, 200, page.body);
      return {
        count: page.json().totalCount as number,
        ids: page
          .json()
          .data.map((m: { externalId: string }) => m.externalId)
          .sort() as string[],
      };
    };

    test('a delete of a member the import drops is answered while the import runs; the import then completes', async () => {
      const app = await buildTestApp(dialect);
      try {
        const { s, ws, idOf, text } = await setUp(app);
        const c2 = await idOf('c-2');
        let deleted: Answer | undefined;
        await runImport(ws, {
          kinds: kindsWithHook(async () => {
            deleted = await within('the delete', call(app, s.secret, 'DELETE', `/v1/contacts/${c2}`));
          }),
          text,
          commit: 'atomic',
        });
        assert.equal(deleted?.statusCode, 200, deleted?.body);
        const contacts = await call(app, s.secret, 'GET', '/v1/contacts?limit=25');
        assert.equal(contacts.json().totalCount, 6);
        assert.deepEqual(await members(app, s.secret), { count: 4, ids: ['c-0', 'c-1', 'c-3', 'c-4'] });
      } finally {
        await app.close();
      }
    });

    test('a delete of a member the import keeps is answered while the import runs; the import then fails, writing nothing', async () => {
      const app = await buildTestApp(dialect);
      try {
        const { s, ws, idOf, text } = await setUp(app);
        const c1 = await idOf('c-1');
        let deleted: Answer | undefined;
        await assert.rejects(
          runImport(ws, {
            kinds: kindsWithHook(async () => {
              deleted = await within('the delete', call(app, s.secret, 'DELETE', `/v1/contacts/${c1}`));
            }),
            text,
            commit: 'atomic',
          }),
          (err: Error) => /line 4: members\[1\]: no contact with externalId "c-1"/.test(err.message),
        );
        assert.equal(deleted?.statusCode, 200, deleted?.body);
        const contacts = await call(app, s.secret, 'GET', '/v1/contacts?limit=25');
        assert.equal(contacts.json().totalCount, 3);
        assert.deepEqual(await members(app, s.secret), { count: 2, ids: ['c-0', 'c-2'] });
      } finally {
        await app.close();
      }
    });
  });
