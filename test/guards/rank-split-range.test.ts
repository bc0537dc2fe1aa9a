// A range of a partition's keys between two entries ([e.lo, hi), what a split or a recount reads)
// is read from its start to its end only, also inside a block of rows with one timestamp, as an
// import writes them: a btree scan ends a row comparison `(ts, id) < hi` only by its first column,
// so the leaf's rows were followed by every row of the block after it. Counted through the
// buffers PostgreSQL's EXPLAIN reports for the leaf's rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { settled } from '../../src/db/pipeline.ts';
import { rankRebuild, setRankSizes } from '../../src/db/rank/index.ts';
import { type Entry, Partition } from '../../src/db/rank/partition.ts';
import { write } from '../../src/db/write.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const ROWS = 20_000;
const AT = '2026-01-01T00:00:00.000Z';
const BEFORE = '2025-12-31T00:00:00.000Z';

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`a partition's range inside a block of one timestamp [${dialect}]`, () => {
    let tdb: TestDb;
    let ws: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      ws = (await createWorkspace(systemCtx(tdb.db.kysely), { name: 'block' })).id;
      setRankSizes({ leaf: { max: 64, target: 48, min: 16 }, fanout: { max: 64, target: 48, min: 16 }, fold: 64 });
      await write(tdb.db.kysely, async (tx) => {
        await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
          select 'con_' || lpad(g::text, 8, '0'), ${ws}, 'contact', 'c' || g, '{}', ${AT}, ${AT} from generate_series(1, ${ROWS}) as g`.execute(tx);
        // Older rows, so that one leaf begins before the block and ends inside it.
        await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
          select 'con_old' || lpad(g::text, 4, '0'), ${ws}, 'contact', 'o' || g, '{}', ${BEFORE}, ${BEFORE} from generate_series(1, 70) as g`.execute(tx);
        await rankRebuild(tx, RECORDS, [ws, 'contact']);
        await settled(tx);
      });
      await sql`analyze records`.execute(tdb.db.kysely);
    });
    after(async () => {
      setRankSizes();
      await tdb.drop();
    });

    const buffers = async (tx: Parameters<Parameters<typeof write>[1]>[0], query: ReturnType<Partition['children']>) => {
      const plan = await sql<{
        'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }];
      }>`explain (analyze, buffers, format json) select count(*) from (${query}) x`.execute(tx);
      const top = plan.rows[0]!['QUERY PLAN'][0].Plan;
      return top['Shared Hit Blocks'] + top['Shared Read Blocks'];
    };

    const leafAgainstBlock = async (pick: (leaves: Entry[]) => number) =>
      write(tdb.db.kysely, async (tx) => {
        const p = new Partition(tx, RECORDS, [ws, 'contact']);
        const leaves = (await sql<Entry>`select lo_ts, lo_id, n from rank_buckets where scope = ${p.scope} and level = 0 order by lo_ts, lo_id`.execute(tx))
          .rows;
        assert.ok(leaves.length > 100, `${leaves.length} leaves`);
        const i = pick(leaves);
        const [e, hi] = [leaves[i]!, leaves[i + 1]!];
        const n = await sql<{ c: number }>`select count(*) as c from (${p.children(0, e, hi)}) x`.execute(tx);
        assert.equal(Number(n.rows[0]!.c), Number(e.n));
        // The whole partition: the block's index entries alone take well over a hundred pages.
        const all = await buffers(tx, p.children(0, leaves[0]!, undefined));
        const leaf = await buffers(tx, p.children(0, e, hi));
        assert.ok(all > 100, `the partition read ${all} pages`);
        assert.ok(leaf * 10 < all, `one leaf of ${e.n} rows read ${leaf} pages, the partition ${all}`);
      });

    test('a leaf inside the block: about its own pages, not the rest of the block', async () => {
      await leafAgainstBlock((leaves) => leaves.findIndex((l) => l.lo_ts === AT) + 2);
    });

    test('a leaf that begins before the block and ends inside it: the same', async () => {
      await leafAgainstBlock((leaves) => leaves.findIndex((l) => l.lo_ts === AT) - 1);
    });
  });
}
