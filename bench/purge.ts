// The cost of `rolodex trash purge` of many entries (docs/trash.md §Purge): a workspace holds
// --events events and --answers stored idempotent answers that name other records; each round
// creates --entries contacts linked to one account (each with its create's stored answer),
// deletes them, and purges them all in one
// transaction, as `rolodex trash purge --workspace W ID...` does, in a child process
// (bench/purge-child.ts) that times the purge alone, not the process's start. With --before DIR
// (another checkout, e.g. a worktree of main), each round purges once with that checkout's modules
// and once with this one's, on the same database, the first of the pair swapped each round: the
// medians of each, and their ratio. Then the sweeper purges --entries more, `fewTexts` a
// transaction: the time of each.
//   node bench/purge.ts [--dialect both|sqlite|postgres] [--events 4000] [--answers 2000] [--entries 200] [--rounds 3]
//     [--before DIR]
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { insertEvents } from '../src/changes/repository.ts';
import { fewTexts } from '../src/db/portable.ts';
import type { DialectName } from '../src/db/types.ts';
import { write } from '../src/db/write.ts';
import { operatorCtx } from '../src/lib/context.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { createRecord, RECORD_TYPES } from '../src/records/service.ts';
import { purgeExpiredTrash } from '../src/trash/purge.ts';
import { trashRecord } from '../src/trash/service.ts';
import { median, seedContext } from './run.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    events: { type: 'string', default: '4000' },
    answers: { type: 'string', default: '2000' },
    entries: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    before: { type: 'string' },
  },
});
const run = promisify(execFile);
const load1 = () => loadavg()[0]!.toFixed(1);
const ms = (x: number) => `${x.toFixed(0)} ms`;

const CHILD = fileURLToPath(new URL('./purge-child.ts', import.meta.url));
const HERE = fileURLToPath(new URL('..', import.meta.url));

/** The purge of `ids` with the modules of checkout `dir`: its milliseconds and counts. */
async function purgeWith(dir: string, env: Record<string, string>, ws: string, ids: string[]): Promise<{ ms: number; counts: Record<string, number> }> {
  const r = await run(process.execPath, [CHILD, dir, ws, ...ids], { env: { PATH: process.env.PATH ?? '', ...env }, maxBuffer: 1 << 24 });
  return JSON.parse(r.stdout) as { ms: number; counts: Record<string, number> };
}

async function bench(dialect: DialectName): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const ws = ctx.workspaceId;
  /** A stored answer of a contact's create under `key`. */
  const stored = (key: string, body: string) => {
    const at = isoNow(Date.now());
    return {
      workspace_id: ws,
      operation: 'createContact',
      key,
      fingerprint: 'f',
      state: 'done' as const,
      status_code: 200,
      body,
      locked_at: at,
      created_at: at,
    };
  };
  const env = { DATA_DIR: tdb.dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  // The log and the stored answers of a workspace's past: copies of a real contact's event and
  // answer, each naming a contact and an account of its own.
  const model = await write(db, (tx) =>
    createRecord(operatorCtx(tx, ws), { type: RECORD_TYPES.contact, fields: { $name: { firstName: 'Model', lastName: 'Event' }, $email: ['m@x.test'] } }),
  );
  const modelEvent = await db.selectFrom('events').selectAll().where('object_id', '=', model.id).executeTakeFirstOrThrow();
  const answer = JSON.stringify(model);
  await write(db, async (tx) => {
    const events = Array.from({ length: Number(args.events) }, () => {
      const objectId = newId('con', Date.now());
      const body = modelEvent.body.replaceAll(model.id, objectId).replace(modelEvent.id, newId('evt', Date.now()));
      return { ...modelEvent, id: newId('evt', Date.now()), object_id: objectId, occurred_at: isoNow(Date.now()), body: `${body} ${newId('acc', Date.now())}` };
    });
    await insertEvents(tx, events);
    for (let i = 0; i < Number(args.answers); i++)
      await tx
        .insertInto('idempotency_keys')
        .values(stored(`k${i}`, answer.replaceAll(model.id, newId('con', Date.now()))))
        .execute();
  });
  const n = Number(args.entries);
  /** n contacts linked to one account, deleted: their ids. */
  const trash = async () =>
    write(db, async (tx) => {
      const op = operatorCtx(tx, ws);
      const account = await createRecord(op, { type: RECORD_TYPES.account, fields: { $name: 'Acme' } });
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const c = await createRecord(op, {
          type: RECORD_TYPES.contact,
          fields: { $name: { firstName: 'P', lastName: `${i}` } },
          relationships: { $account: [account.id] },
        });
        ids.push(c.id);
        await tx
          .insertInto('idempotency_keys')
          .values(stored(`${c.id}-create`, JSON.stringify(c)))
          .execute();
      }
      for (const id of ids) await trashRecord(op, RECORD_TYPES.contact, { id });
      return ids;
    });
  const checkouts = [...(args.before ? [{ name: 'before', dir: resolve(args.before) }] : []), { name: 'this', dir: HERE }];
  const times = new Map<string, number[]>(checkouts.map((c) => [c.name, []]));
  for (let round = 0; round < Number(args.rounds); round++) {
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const c of order) {
      const ids = await trash();
      const { ms: took, counts } = await purgeWith(c.dir, env, ws, ids);
      if (counts.records !== n) throw new Error(`${c.name}: purged ${JSON.stringify(counts)}`);
      times.get(c.name)!.push(took);
      console.log(`${dialect} round ${round + 1} ${c.name}: purge of ${n} ${ms(took)} (${JSON.stringify(counts)}), load ${load1()}`);
    }
  }
  // The sweeper's batches (this checkout): the time of each transaction, which holds SQLite's writer.
  const due = await trash();
  const t0 = performance.now();
  const swept = await purgeExpiredTrash(db, Date.now() + 60_000, 1, due.length);
  const batches = Math.ceil(due.length / fewTexts(db));
  console.log(`${dialect} sweeper: ${swept} entries in ${batches} transactions of ${fewTexts(db)}, ${ms((performance.now() - t0) / batches)} a transaction`);
  for (const [name, t] of times) console.log(`${dialect} ${name}: median purge ${ms(median(t))}, ${(median(t) / n).toFixed(2)} ms an entry`);
  const before = times.get('before');
  if (before) console.log(`${dialect} ratio this/before: ${(median(times.get('this')!) / median(before)).toFixed(3)}`);
  await tdb.drop();
}

console.log(`${args.events} events, ${args.answers} stored answers, ${args.entries} entries a purge, load ${load1()}`);
for (const d of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await bench(d);
