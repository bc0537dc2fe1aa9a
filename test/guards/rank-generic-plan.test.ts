// A page's statement on PostgreSQL under a generic plan (docs/pages.md): a named statement is
// planned once for any values after five runs, and such a plan may sort a range instead of
// streaming it and stopping early. Every range a page reads is bounded on both sides, so whatever
// the plan, no scan returns more than about one entry's worth: the top level, one upper entry's
// leaves, one leaf's rows, and the page. Checked here with EXPLAIN ANALYZE of the statements run
// with plan_cache_mode = force_generic_plan, at offsets from the first page to the last, for a
// ranked list (first on tables never analyzed, then analyzed) and for messages read by a
// workspace key and by a member of private channels.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { partedPostgres, type PartedRead } from '../../src/db/rank/parted.ts';
import { pagePostgres, type Stmt } from '../../src/db/rank/sql.ts';
import { defineRank, LEVELS, rankPage, rankRebuild, rankSizes, partitionKey } from '../../src/db/rank/index.ts';
import { isoNow, newId } from '../../src/lib/ids.ts';
import { addMembers, insertList, LIST_MEMBERS } from '../../src/lists/repository.ts';
import { MESSAGES, messageReader } from '../../src/messages/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { genericPlan, scans } from '../helpers/plans.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

const ROWS = 3000;
const T0 = Date.UTC(2026, 0, 1);

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`ranked pages under a generic plan [${dialect}]`, () => {
    // Small leaves and wide upper entries: many leaves under few upper entries, so that reading
    // every leaf from an entry's lo to the end of the scope would show.
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 64, target: 32, min: 8 } });
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(() => tdb.drop());

    /** The largest number of rows any scan of the statement returns, per relation, at this offset. */
    async function widest(stmt: Stmt, args: Record<string, unknown>): Promise<Map<string, number>> {
      const params = stmt.args.map((a) => args[a]);
      const plan = await genericPlan(tdb.db.kysely, stmt.sql, params);
      assert.doesNotMatch(JSON.stringify(plan), /"Custom Plan Provider"/);
      const out = new Map<string, number>();
      for (const s of scans(plan)) {
        const rel = s['Relation Name'];
        out.set(rel, Math.max(out.get(rel) ?? 0, s['Actual Rows'] * s['Actual Loops']));
      }
      return out;
    }

    async function assertBounded(what: string, scope: string, found: Map<string, number>, parts: number) {
      const { leaf, fanout } = rankSizes();
      // The top level is read whole (a few entries); below it one entry's worth at most.
      const r = await sql<{ c: number }>`select count(*) as c from rank_buckets where scope = ${scope} and level = ${LEVELS - 1}`.execute(tdb.db.kysely);
      const top = Number(r.rows[0]?.c);
      assert.ok(top * 4 < ROWS / leaf.max, `few upper entries over many leaves: ${top}`);
      const bound: Record<string, number> = {
        rank_buckets: Math.max(top, fanout.max),
        rank_parts: Math.max(top, fanout.max) * parts,
        list_members: Math.max(leaf.max, 25),
        messages: Math.max(leaf.max, 25) * parts,
      };
      for (const [rel, rows] of found) {
        const most = bound[rel];
        if (most === undefined) continue;
        assert.ok(rows <= most, `${what}: a scan of ${rel} returned ${rows} rows, more than ${most}`);
      }
    }

    /** A workspace `ws` with one contact list of ROWS members added 100 at a time; the list's id. */
    async function seedList(ws: string): Promise<string> {
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values (${ws}, ${ws}, ${isoNow(T0)})`.execute(db);
      const list = newId('lst', T0);
      await write(db, async (tx) => {
        await insertList(tx, {
          id: list,
          workspace_id: ws,
          external_id: null,
          name: ws,
          object_type: 'contact',
          member_count: 0,
          created_at: isoNow(T0),
          updated_at: isoNow(T0),
        });
        for (let i = 0; i < ROWS; i += 100) {
          const ids = Array.from({ length: 100 }, (_, k) => newId('con', T0 + i + k));
          await addMembers(tx, list, ids, isoNow(T0 + i));
        }
      });
      return list;
    }

    // First, while no table of this database has statistics: a generic plan made without them
    // estimates a handful of rows per list and may collect every row below the page's anchor and
    // sort them, unless the page's own range is bounded below too (docs/pages.md §Reading a page).
    test('a list page on tables never analyzed: no scan reads past two leaves', async () => {
      const db = tdb.db.kysely;
      const list = await seedList('ws_u');
      for (const offset of [300, 1200, 2500]) {
        const args = { scope: partitionKey(LIST_MEMBERS, [list]), k: offset, limit: 25, by0: list };
        await assertBounded(`unanalyzed list offset ${offset}`, args.scope, await widest(pagePostgres(LIST_MEMBERS, false, 25), args), 1);
      }
      // Leaves of at most 8 rows: a page of 25 leaves the two the bounded read covers, so the page
      // is read again without the bound, and is still the scope's rows at that offset.
      const all = (
        await db.selectFrom('list_members').select('entity_id').where('list_id', '=', list).orderBy('added_at', 'desc').orderBy('entity_id', 'desc').execute()
      ).map((r) => r.entity_id);
      for (const offset of [0, 300, 1200, ROWS - 25, ROWS - 10]) {
        const page = await rankPage(db, LIST_MEMBERS, [list], { offset, limit: 25 });
        assert.equal(page.total, ROWS);
        assert.deepEqual(
          page.rows.map((r) => r.id),
          all.slice(offset, offset + 25),
        );
      }
    });

    test('a list page: no scan reads past the entry it is in, at any offset', async () => {
      const db = tdb.db.kysely;
      const list = await seedList('ws_g');
      await sql`analyze`.execute(db);
      for (const offset of [0, 300, 1200, 2500, ROWS - 25]) {
        for (const rows of [false, true]) {
          const args = { scope: partitionKey(LIST_MEMBERS, [list]), k: offset, limit: 25, by0: list };
          await assertBounded(`list offset ${offset}`, args.scope, await widest(pagePostgres(LIST_MEMBERS, rows, 25), args), 1);
        }
      }
    });

    test('a message page, for a workspace key and for a member of private channels: bounded the same way', async () => {
      const db = tdb.db.kysely;
      const at = isoNow(T0);
      await sql`insert into workspaces (id, name, created_at) values ('ws_m', 'm', ${at})`.execute(db);
      await sql`insert into users (id, workspace_id, external_id, email, role, created_at, updated_at) values ('usr_m', 'ws_m', null, 'm@x.test', 'member', ${at}, ${at})`.execute(
        db,
      );
      const channels = ['public', 'restricted', 'private', 'private', 'private'].map((v, i) => ({ id: `chn_${i}`, v }));
      for (const c of channels)
        await sql`insert into channels (id, workspace_id, external_id, provider, name, visibility, message_count, created_at, updated_at)
          values (${c.id}, 'ws_m', null, 'slack', ${c.id}, ${c.v}, 0, ${at}, ${at})`.execute(db);
      await sql`insert into channel_members (channel_id, user_id, created_at) values ('chn_2', 'usr_m', ${at}), ('chn_3', 'usr_m', ${at})`.execute(db);
      for (let i = 0; i < ROWS; i += 200) {
        const rows = Array.from({ length: 200 }, (_, k) => {
          const c = channels[(i + k) % channels.length] as { id: string; v: string };
          return sql`(${newId('msg', T0 + i + k)}, 'ws_m', ${c.id}, ${c.v}, null, ${isoNow(T0 + (i + k) * 1000)}, null, 'slack', null, 'TEXT', ${at}, ${at})`;
        });
        await sql`insert into messages (id, workspace_id, channel_id, channel_visibility, external_id, sent_at, edited_at, provider, provider_thread_id, text_type, created_at, updated_at)
          values ${sql.join(rows)}`.execute(db);
      }
      await write(db, (tx) => rankRebuild(tx, MESSAGES, ['ws_m']));
      await sql`analyze`.execute(db);
      for (const [who, userId, parts] of [
        ['workspace key', null, 1],
        ['member', 'usr_m', 3],
      ] as const) {
        const read: PartedRead = messageReader({ workspaceId: 'ws_m', userId });
        const sees = userId ? (ROWS * 4) / 5 : (ROWS * 2) / 5;
        for (const offset of [0, Math.floor(sees / 3), Math.floor(sees / 2), sees - 25]) {
          const args = { ...read.args, scope: partitionKey(MESSAGES, ['ws_m']), k: offset, limit: 25, by0: 'ws_m' };
          await assertBounded(`${who} offset ${offset}`, args.scope, await widest(partedPostgres(MESSAGES, read, 25), args), parts);
        }
      }
    });

    // A set whose creates append count deltas (docs/pages.md §Creates that only insert): the same
    // members ranked as such a set, part of the counts of some entries held as pending deltas, as
    // concurrent creates leave them. The deltas are read once, bounded by their number.
    test('a page of a set with pending count deltas: bounded the same way, the same rows', async () => {
      const db = tdb.db.kysely;
      const list = await seedList('ws_d');
      const APPENDS = defineRank({ name: 'gp_appends', table: 'list_members', by: ['list_id'], ts: 'added_at', id: 'entity_id', appends: true });
      await write(db, (tx) => rankRebuild(tx, APPENDS, [list]));
      const scope = partitionKey(APPENDS, [list]);
      const moved = await sql<{ level: number; lo_ts: string; lo_id: string }>`update rank_buckets set n = n - 2
        where scope = ${scope} and (level = ${LEVELS - 1} or lo_ts = '' or lo_id like '%5') returning level, lo_ts, lo_id`.execute(db);
      assert.ok(moved.rows.length > 10, `entries with deltas: ${moved.rows.length}`);
      for (const e of moved.rows)
        await sql`insert into rank_deltas (scope, level, lo_ts, lo_id, d) values (${scope}, ${e.level}, ${e.lo_ts}, ${e.lo_id}, 1), (${scope}, ${e.level}, ${e.lo_ts}, ${e.lo_id}, 1)`.execute(
          db,
        );
      await sql`analyze`.execute(db);
      await checkEntries(db, APPENDS, [list]);
      for (const offset of [0, 300, 1200, 2500, ROWS - 25]) {
        const args = { scope, k: offset, limit: 25, by0: list };
        const found = await widest(pagePostgres(APPENDS, true, 25), args);
        assert.ok((found.get('rank_deltas') ?? 0) <= moved.rows.length * 2, `offset ${offset}: ${found.get('rank_deltas')} delta rows read`);
        await assertBounded(`appends offset ${offset}`, scope, found, 1);
      }
      await checkPages(db, APPENDS, [list], { limit: 25, offsets: [0, 13, 300, 1200, 2500, ROWS - 25, ROWS - 1, ROWS] });
    });
  });
}
