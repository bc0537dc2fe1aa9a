// Where a list create's CPU goes on PostgreSQL, in process: creates 20 at a time (so that they
// commit in groups, as under load), each written four ways: whole; without its event; without
// the listing's count (the list's row inserted under the partition's lock, no rank delta and so no
// upkeep after COMMIT); without either. Prints per round and way the CPU a create cost the
// backends serving this process and this process itself; the differences are what the event and
// the count cost (docs/performance.md §Routes). Linux only.
//   node bench/list-create-parts.ts [--rounds 3]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { appendEvent } from '../src/changes/service.ts';
import { deferredInsert, lockPartition, write } from '../src/db/index.ts';
import { operatorCtx } from '../src/lib/context.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { LISTS, insertList } from '../src/lists/repository.ts';
import { backends, cpuMs } from './proc-cpu.ts';
import { seedContext } from './run.ts';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const WAYS = ['whole', 'no event', 'no count', 'neither'] as const;
type Way = (typeof WAYS)[number];

const { tdb, ctx: bench } = await seedContext('postgres');
const db = tdb.db.kysely;

async function create(way: Way): Promise<void> {
  await write(
    db,
    async (tx) => {
      const now = Date.now();
      const at = isoNow(now);
      const row = {
        id: newId('lst', now),
        workspace_id: bench.workspaceId,
        external_id: null,
        name: 'Bench',
        object_type: 'account' as const,
        member_count: 0,
        created_at: at,
        updated_at: at,
      };
      if (way === 'whole' || way === 'no event') await insertList(tx, row);
      else {
        await lockPartition(tx, LISTS, [row.workspace_id], 'insert');
        await deferredInsert(tx, tx.insertInto('lists').values(row));
      }
      const object = {
        id: row.id,
        createdAt: at,
        fields: { $name: { value: 'Bench', valueType: 'TEXT' }, $objectType: { value: 'account', valueType: 'TEXT' } },
      };
      if (way === 'whole' || way === 'no count') await appendEvent({ ...operatorCtx(tx, bench.workspaceId), now }, { type: 'list.created', object });
    },
    { followUpFailed: () => {} },
  );
}

const batches = (way: Way, n: number) =>
  Array.from({ length: n }).reduce<Promise<unknown>>((p) => p.then(() => Promise.all(Array.from({ length: 20 }, () => create(way)))), Promise.resolve());

try {
  for (let round = 1; round <= Number(args.rounds); round++)
    for (const way of WAYS) {
      await sql`vacuum analyze`.execute(db);
      await batches(way, 100);
      const before = new Map(backends([process.pid]).map((p) => [p, cpuMs(p)]));
      const own = process.cpuUsage();
      const N = 300;
      await batches(way, N);
      const after = backends([process.pid]);
      const pg = after.reduce((n, p) => n + cpuMs(p) - (before.get(p) ?? 0), 0);
      const mine = process.cpuUsage(own);
      const creates = N * 20;
      console.log(
        `round ${round}, ${way}: ${((pg * 1000) / creates).toFixed(0)} µs PostgreSQL, ${((mine.user + mine.system) / creates).toFixed(0)} µs this process a create`,
      );
    }
} finally {
  await tdb.drop();
}
process.exit(0);
