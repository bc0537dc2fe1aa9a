// A late transaction's run of keys (docs/pages.md §Long transactions): a transaction marked with
// `lockLate` inserts rows of one timestamp with ids in increasing order, as an atomic import does,
// while other writers insert into the same partition; at its end the run is counted into entries
// without its rows, or, when another row lies inside its block or an entry begins there, the
// partition is counted from its rows. Either way every entry counts exactly the rows it holds and
// every page reads as the rows do. Tiny buckets make the block span many leaves and split the
// level above. On SQLite the other writers' rows are written first (one writer at a time), and the
// counts are checked the same way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lockLate, takeLateLocks } from '../../src/db/rank/index.ts';
import { LATE_KEYS } from '../../src/db/rank/late.ts';
import { write } from '../../src/db/write.ts';
import { insertList, LISTS, type ListRow } from '../../src/lists/repository.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';

const RUN_TS = '2026-11-30T12:00:00.000Z';
const list = (workspaceId: string, at: string, id: string): ListRow => ({
  id,
  workspace_id: workspaceId,
  external_id: null,
  name: id,
  object_type: 'account',
  member_count: 0,
  created_at: at,
  updated_at: at,
});
/** The run's ids: lst_<test>r0010, lst_<test>r0020, … (room between them for others' rows). */
const runId = (tag: string, i: number) => `lst_${tag}r${String((i + 1) * 10).padStart(4, '0')}`;
let tests = 0;

eachDialect('a late transaction’s run of keys', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  const cases = [
    { name: 'others write before and after the block: the run is counted as noted', newer: 10, atRunTs: [] as string[] },
    { name: 'a few rows after the block, in the leaf that holds it: the run is counted as noted', newer: 2, atRunTs: [] as string[] },
    {
      name: 'rows at the block’s timestamp just below it: the run is counted as noted',
      newer: 10,
      atRunTs: Array.from({ length: 12 }, (_, i) => `r0005${String.fromCharCode(97 + i)}`),
    },
    { name: 'another row inside the block: counted from the rows', newer: 10, atRunTs: ['r0105'] },
    {
      name: 'entries begin inside the block: counted from the rows',
      newer: 10,
      atRunTs: Array.from({ length: 12 }, (_, i) => `r0205${String.fromCharCode(97 + i)}`),
    },
  ];
  for (const c of cases)
    for (const budget of [LATE_KEYS.max, 20])
      test(`${c.name} (${budget} late keys)`, async () => {
        const saved = LATE_KEYS.max;
        LATE_KEYS.max = budget;
        const t = ctx();
        const s = await seedWorkspace(t);
        const db = t.deps.db.kysely;
        const ws = s.workspaceId;
        const tag = `t${++tests}`;
        const others = async () => {
          // Older and newer rows than the block, and those at its timestamp, each in a write of its own.
          for (let i = 0; i < 10; i++) await write(db, (tx) => insertList(tx, list(ws, '2026-11-30T11:00:00.000Z', `lst_${tag}old${i}`)));
          for (let i = 0; i < c.newer; i++) await write(db, (tx) => insertList(tx, list(ws, '2026-11-30T13:00:00.000Z', `lst_${tag}x${i}`)));
          for (const id of c.atRunTs) await write(db, (tx) => insertList(tx, list(ws, RUN_TS, `lst_${tag}${id}`)));
        };
        try {
          const postgres = t.deps.db.dialect === 'postgres';
          if (!postgres) await others();
          await write(db, async (tx) => {
            lockLate(tx);
            for (let i = 0; i < 60; i++) await insertList(tx, list(ws, RUN_TS, runId(tag, i)));
            // On PostgreSQL the others commit while this transaction is open: it holds no lock yet.
            if (postgres) await others();
            await takeLateLocks(tx);
          });
        } finally {
          LATE_KEYS.max = saved;
        }
        const shape = await checkEntries(db, LISTS, [ws]);
        assert.equal(shape.total, 70 + c.newer + c.atRunTs.length);
        await checkPages(db, LISTS, [ws], { limit: 7 });
      });
});
