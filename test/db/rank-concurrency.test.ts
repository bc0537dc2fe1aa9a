// Ranked pages under concurrent writers (docs/pages.md), through the API, on both databases: two
// app instances on one database (two SQLite connections to one file; two PostgreSQL pools) add and
// remove list members, create lists and files at the same time while others read pages. Every page
// read meanwhile agrees with its own totalCount, and afterwards every count is exact and every page
// equals the naive ORDER BY … LIMIT … OFFSET. Tiny buckets make leaves and levels split and merge.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { createDiskBlobStore } from '../../src/blobs/disk.ts';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { LISTED_FILES } from '../../src/files/repository.ts';
import { LIST_MEMBERS, LISTS } from '../../src/lists/repository.ts';
import { buildTestApp, headers, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { testDialects } from '../helpers/db.ts';
import { seedRecords } from '../helpers/lists-fixtures.ts';
import { checkEntries, checkPages, naivePage, useRankSizes } from '../helpers/rank.ts';

// A deterministic shuffle, so that a failure can be replayed.
function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

for (const dialect of testDialects()) {
  describe(`ranked pages under concurrent writers [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let t: TestApp;
    let db2: Db;
    let app2: FastifyInstance;
    before(async () => {
      t = await buildTestApp(dialect);
      db2 = t.tdb.sqliteFile
        ? openDb({ dataDir: t.tdb.dataDir, sqliteFile: t.tdb.sqliteFile })
        : openDb({ dataDir: t.tdb.dataDir, databaseUrl: TEST_DATABASE_URL, schema: t.tdb.schema });
      const { metrics: _own, ...shared } = t.deps; // the second app keeps its own metrics registry
      app2 = await buildApp(t.config, { ...shared, db: db2, auth: new Authenticator(db2), blobs: createDiskBlobStore(join(t.tdb.dataDir, 'blobs')) });
      await app2.ready();
    });
    after(async () => {
      await app2?.close();
      await db2?.close();
      await t?.close();
    });

    test('members, lists and files written concurrently: exact counts, every page naive, reads consistent', async () => {
      const s = await seedWorkspace(t);
      const ids = await seedRecords(t, s.workspaceId, 'contact', 240);
      const apps = [t.app, app2];
      const send = (i: number, method: 'GET' | 'POST', url: string, body?: unknown) =>
        (apps[i % 2] as FastifyInstance).inject({
          method,
          url,
          headers: headers(s.secret, body ? { 'content-type': 'application/json' } : {}),
          ...(body ? { payload: JSON.stringify(body) } : {}),
        });
      const created = await send(0, 'POST', '/v1/lists', {
        fields: { $name: 'busy', $objectType: 'contact' },
        relationships: { $contacts: ids.slice(0, 120) },
      });
      assert.equal(created.statusCode, 200, created.body);
      const listId = created.json().id as string;

      const random = rng(7);
      const pick = (n: number) => Array.from({ length: n }, () => ids[Math.floor(random() * ids.length)] as string);
      const inconsistent: string[] = [];
      const read = async (i: number, url: string, limit: number, offset: number) => {
        const r = await send(i, 'GET', `${url}${url.includes('?') ? '&' : '?'}limit=${limit}&offset=${offset}`);
        assert.equal(r.statusCode, 200, r.body);
        const { data, totalCount } = r.json();
        if (data.length !== Math.max(0, Math.min(limit, totalCount - offset)))
          inconsistent.push(`${url} offset ${offset}: ${data.length} items of ${totalCount}`);
      };
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 60; i++) {
        const add = [...new Set(pick(1 + Math.floor(random() * 30)))];
        const remove = [...new Set(pick(1 + Math.floor(random() * 30)))].filter((id) => !add.includes(id));
        work.push(
          send(i, 'POST', `/v1/lists/${listId}`, { relationships: { $contacts: { add, remove } } }).then((r) => assert.equal(r.statusCode, 200, r.body)),
        );
        if (i % 2 === 0)
          work.push(
            send(i + 1, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'account' } }).then((r) => assert.equal(r.statusCode, 200, r.body)),
          );
        if (i % 2 === 1)
          work.push(
            send(i, 'POST', '/v1/files', { filename: `f${i}.txt`, mimeType: 'text/plain', sizeBytes: 3 }).then((r) => assert.equal(r.statusCode, 200, r.body)),
          );
        work.push(read(i + 1, `/v1/lists/${listId}/contacts`, 1 + (i % 25), Math.floor(random() * 150)));
        if (i % 3 === 0) work.push(read(i, '/v1/lists', 7, Math.floor(random() * 35)));
      }
      await Promise.all(work);
      assert.deepEqual(inconsistent, []);

      await rankUpkeepSettled(); // splits and folds run after the answers
      const db = t.deps.db.kysely;
      const members = await checkEntries(db, LIST_MEMBERS, [listId]);
      assert.ok((members.entries[0] ?? 0) > 5 && (members.entries[1] ?? 0) > 1, `leaves and upper entries: ${members.entries.join(',')}`);
      const list = await db.selectFrom('lists').select('member_count').where('id', '=', listId).executeTakeFirstOrThrow();
      assert.equal(Number(list.member_count), members.total);
      await checkPages(db, LIST_MEMBERS, [listId], { limit: 25 });
      assert.equal((await checkEntries(db, LISTS, [s.workspaceId])).total, 31);
      await checkPages(db, LISTS, [s.workspaceId], { limit: 5 });
      assert.equal((await checkEntries(db, LISTED_FILES, [s.workspaceId])).total, 30);
      await checkPages(db, LISTED_FILES, [s.workspaceId], { limit: 4 });

      // Through the API, from both instances: the same pages as the naive query.
      for (const offset of [0, 13, 50, members.total - 1, members.total]) {
        const want = await naivePage(db, LIST_MEMBERS, [listId], offset, 25);
        for (const i of [0, 1]) {
          const r = (await send(i, 'GET', `/v1/lists/${listId}/contacts?offset=${offset}`)).json();
          assert.equal(r.totalCount, members.total);
          assert.deepEqual(
            r.data.map((e: { id: string }) => e.id),
            want,
            `instance ${i} offset ${offset}`,
          );
        }
      }
    });
  });
}
