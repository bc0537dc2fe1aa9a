// Migration 0005_rank builds the ranked index of rows that already exist (docs/pages.md): a
// database at 0004 with lists, members (identical timestamps included) and files of every source
// is migrated, then every scope's counts are exact and every page equals the naive one, on both
// databases; the index then keeps up with writes through the API.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import * as m0001 from '../../src/db/migrations/0001_foundation.ts';
import * as m0002 from '../../src/db/migrations/0002_lists.ts';
import * as m0003 from '../../src/db/migrations/0003_messages.ts';
import * as m0004 from '../../src/db/migrations/0004_files.ts';
import { LISTED_FILES } from '../../src/files/repository.ts';
import { isoNow, newId } from '../../src/lib/ids.ts';
import { addMembers, LIST_MEMBERS, LISTS, removeMembers } from '../../src/lists/repository.ts';
import { testDialects } from '../helpers/db.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { write } from '../../src/db/write.ts';

const T0 = Date.UTC(2026, 0, 1);

/** Rows as 0004 knew them: two workspaces, their lists, members and files. */
async function seed(db: Db) {
  const k = db.kysely;
  const at = (ms: number) => isoNow(T0 + ms);
  const ws = ['ws_a', 'ws_b'];
  for (const id of ws)
    await k
      .insertInto('workspaces')
      .values({ id, name: id, created_at: at(0) })
      .execute();
  const lists: string[] = [];
  for (let i = 0; i < 45; i++) {
    const id = newId('lst', T0 + Math.floor(i / 4)); // several share a millisecond
    lists.push(id);
    await k
      .insertInto('lists')
      .values({
        id,
        workspace_id: ws[i % 2] as string,
        name: `l${i}`,
        object_type: 'contact',
        member_count: 0,
        created_at: at(Math.floor(i / 4)),
        updated_at: at(0),
      })
      .execute();
  }
  const big = lists[0] as string;
  const members = Array.from({ length: 700 }, (_, i) => ({
    list_id: big,
    entity_id: `con_${String((i * 3) % 700).padStart(4, '0')}`,
    added_at: at(Math.floor(i / 100)),
  }));
  for (let i = 0; i < members.length; i += 100)
    await k
      .insertInto('list_members')
      .values(members.slice(i, i + 100))
      .execute();
  await k.updateTable('lists').set({ member_count: members.length }).where('id', '=', big).execute();
  const sources = ['api', 'app', 'api', 'chat_attachment'] as const;
  for (let i = 0; i < 60; i++) {
    await k
      .insertInto('files')
      .values({
        id: newId('fil', T0 + i),
        workspace_id: 'ws_a',
        external_id: null,
        source: sources[i % 4] as (typeof sources)[number],
        status: 'COMPLETED',
        filename: `f${i}`,
        mime_type: 'text/plain',
        size_bytes: 1,
        md5: null,
        blob_key: null,
        created_at: at(Math.floor(i / 6)),
        completed_at: null,
        expires_at: null,
        upload_deadline: at(0),
      })
      .execute();
  }
  return { ws, big, empty: lists[1] as string };
}

for (const dialect of testDialects()) {
  describe(`migration 0005_rank [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let db: Db;
    let dataDir: string;
    let schema: string | undefined;
    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'rolodex-rank-migration-'));
      if (dialect === 'postgres') {
        schema = `t_${randomBytes(6).toString('hex')}`;
        const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await c.connect();
        await c.query(`create schema ${schema}`);
        await c.end();
        db = openDb({ dataDir, databaseUrl: TEST_DATABASE_URL, schema });
      } else {
        db = openDb({ dataDir, sqliteFile: join(dataDir, 'rolodex.db') });
      }
    });
    after(async () => {
      await db?.close();
      if (schema) {
        const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('a database with rows at 0004 gets exact counts for every scope, and pages equal the naive ones', async () => {
      await migrate(db, { '0001_foundation': m0001, '0002_lists': m0002, '0003_messages': m0003, '0004_files': m0004 });
      const { ws, big, empty } = await seed(db);
      assert.equal((await migrate(db))[0], '0005_rank', 'the rank migration runs first on a database at 0004');

      const k = db.kysely;
      const members = await checkEntries(k, LIST_MEMBERS, [big]);
      assert.equal(members.total, 700);
      assert.ok((members.entries[1] ?? 0) > 5, `upper entries built: ${members.entries.join(',')}`);
      await checkPages(k, LIST_MEMBERS, [big], { limit: 25, offsets: [0, 1, 99, 100, 101, 350, 674, 675, 699, 700, 800] });
      await checkPages(k, LIST_MEMBERS, [big], { limit: 7 });
      assert.equal((await checkEntries(k, LIST_MEMBERS, [empty])).total, 0);
      await checkPages(k, LIST_MEMBERS, [empty]);
      for (const w of ws) {
        assert.equal((await checkEntries(k, LISTS, [w])).total, w === 'ws_a' ? 23 : 22);
        await checkPages(k, LISTS, [w], { limit: 4 });
      }
      assert.equal((await checkEntries(k, LISTED_FILES, ['ws_a'])).total, 30);
      await checkPages(k, LISTED_FILES, ['ws_a'], { limit: 6 });
      assert.equal((await checkEntries(k, LISTED_FILES, ['ws_b'])).total, 0);

      // The built index keeps up with later writes.
      await write(k, async (tx) => {
        await removeMembers(
          tx,
          big,
          Array.from({ length: 300 }, (_, i) => `con_${String(i * 2).padStart(4, '0')}`),
        );
        await addMembers(tx, big, ['con_9999', 'con_0001', 'con_0002'], isoNow(T0 + 1000));
      });
      assert.equal((await checkEntries(k, LIST_MEMBERS, [big])).total, 700 - 300 + 2); // con_0001 is still a member; con_0002 was removed
      await checkPages(k, LIST_MEMBERS, [big], { limit: 25 });
    });
  });
}
