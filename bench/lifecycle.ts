// The speed goals of the trash and merges (docs/trash.md, docs/merge.md), on one database:
// - delete: `DELETE /v1/contacts/{id}` against `POST /v1/contacts/{id}` (an update that changes
//   the contact's name), each over --contacts contacts that link to an account, taken in turn
//   through HTTP, measured back to back in rounds (pairedRounds): at least 0.5. Between rounds the
//   deleted contacts are restored, as `rolodex trash restore` does (one write with follow-ups per id,
//   --concurrency at a time, in this process), timed against as many updates through the update
//   service the same way: the restore's ratio, at least 0.5.
// - merge: `POST /v1/contacts/merge` of two contacts with 100 links each (40 accounts of their
//   own, 40 notes that name them, 20 list memberships; half of each shared by the pair), one at a
//   time through HTTP: the median, at most 50 ms. With --before DIR (another checkout, e.g. a
//   worktree of the commit before a change), a server of each checkout runs on the one seeded
//   database and the merges alternate between them, pair by pair, the first of each pair swapped
//   each time: both medians and the median of the pairs' ratios, under the same load, and the CPU
//   each merge cost (bench/proc-cpu.ts), which moves less with the load than the latency.
// - pages: --pages contacts, 10% of them (every tenth) then deleted through HTTP: pages of
//   GET /v1/contacts at 0, 25%, 50%, 75% and the last, before and after, each the median of
//   --requests sequential requests with its exact totalCount: at most 10 ms at every offset.
//   node bench/lifecycle.ts [--dialect sqlite|postgres] [--only delete|merge|pages] [--contacts 12000] [--merges 30] [--before DIR] [--pages 100000]
// BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS apply as in bench/run.ts.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import type { DialectName, Tx } from '../src/db/types.ts';
import { statementJournalsInMemory } from '../src/db/bulk-load.ts';
import { write } from '../src/db/write.ts';
import { rankRebuild } from '../src/db/rank/index.ts';
import { operatorCtx } from '../src/lib/context.ts';
import { createList } from '../src/lists/service.ts';
import { RECORDS } from '../src/records/repository.ts';
import { createRecord, RECORD_TYPES, updateRecord } from '../src/records/service.ts';
import { restore } from '../src/trash/restore.ts';
import { backends, cpuMs, family } from './proc-cpu.ts';
import { latency, MAIN, type Measurement, median, pairedRounds, seedContext, startServer, stop } from './run.ts';
import { seedRankedContacts } from './seeds.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    only: { type: 'string' },
    contacts: { type: 'string', default: '12000' },
    concurrency: { type: 'string', default: '8' },
    merges: { type: 'string', default: '30' },
    before: { type: 'string' },
    pages: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
  },
});
const dialect = args.dialect as DialectName;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const VERSION = { 'service-version': '2026-03-01' };
const load1 = () => loadavg()[0]!.toFixed(1);

/** Requests built one by one (`make(i)`: the i-th request's path and body) for SECONDS after a one-second warm-up; at most `amount` in all when given. */
async function requests(url: string, method: string, headers: Record<string, string>, make: (i: number) => { path: string; body?: string }, amount?: number) {
  let next = 0;
  const opts = {
    url,
    method: method as 'GET',
    headers: { ...headers, 'content-type': 'application/json' },
    connections: CONNECTIONS,
    requests: [{ setupRequest: (req: object) => ({ ...req, ...make(next++) }) }],
  };
  if (amount !== undefined) {
    const r = await autocannon({ ...opts, amount });
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, sent: next };
  }
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration: SECONDS });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, sent: next };
}

/** Runs `fn` on each of `items`, `concurrency` at a time; returns items per second. */
async function rate<T>(items: readonly T[], concurrency: number, fn: (x: T) => Promise<unknown>): Promise<number> {
  let i = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
  return items.length / ((performance.now() - t0) / 1000);
}

async function deletes(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const n = Number(args.contacts);
  const ids = await write(db, async (tx) => {
    const op = operatorCtx(tx, ctx.workspaceId);
    const account = await createRecord(op, { type: RECORD_TYPES.account, fields: { $name: 'Bench account' } });
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const fields = { $name: { firstName: 'Bench', lastName: `Contact ${i}` }, $email: [`bench.${i}@contact.test`] };
      out.push((await createRecord(op, { type: RECORD_TYPES.contact, fields, relationships: { $account: [account.id] } })).id);
    }
    return out;
  });
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
  // On SQLite this handle keeps its statement journals in memory, as the connections it stands for
  // do: the server's for the updates, that of `rolodex trash restore` for the restores
  // (docs/performance.md §Temporary tables of a serving SQLite connection).
  await statementJournalsInMemory(db);
  const server = await startServer(tdb, 1);
  const concurrency = Number(args.concurrency);
  const restores: { restore: number; update: number }[] = [];
  let updated = 0;
  try {
    const headers = { authorization: `Bearer ${ctx.secret}`, ...VERSION };
    const update = () =>
      requests(server.url, 'POST', headers, (i) => ({
        path: `/v1/contacts/${ids[i % n]}`,
        body: JSON.stringify({ fields: { $name: { firstName: 'Bench', lastName: `Updated ${updated++}` } } }),
      }));
    const remove = async (): Promise<Measurement> => {
      const m = await requests(server.url, 'DELETE', headers, (i) => ({ path: `/v1/contacts/${ids[i % n]}` }));
      if (m.sent > n) console.error(`${m.sent} deletes for ${n} contacts: the later ones deleted a contact again; raise --contacts`);
      // Every deleted contact comes back, one transaction each, timed against as many updates;
      // first the answers still in flight when the load stopped land.
      await new Promise((r) => setTimeout(r, 1000));
      const trashed = (await db.selectFrom('trash').select('id').where('workspace_id', '=', ctx.workspaceId).execute()).map((r) => r.id);
      const op = (tx: Tx) => operatorCtx(tx, ctx.workspaceId);
      const fail = (err: unknown) => console.error(err);
      const back = await rate(trashed, concurrency, (id) => write(db, (tx) => restore(op(tx), { id }), { followUpFailed: fail }));
      const edits = await rate(trashed, concurrency, (id) =>
        write(db, (tx) => updateRecord(op(tx), { type: RECORD_TYPES.contact, id, fields: { $name: { firstName: 'Bench', lastName: `Again ${updated++}` } } }), {
          followUpFailed: fail,
        }),
      );
      restores.push({ restore: back, update: edits });
      console.error(`  deletes ${Math.round(m.rps)}/s; restored ${trashed.length} at ${Math.round(back)}/s, updates ${Math.round(edits)}/s; load ${load1()}`);
      return m;
    };
    const r = await pairedRounds(update, remove);
    console.log(
      `DELETE vs POST /v1/contacts/{id} [${dialect}]: ${Math.round(r.rps)} against ${r.referenceRps.join(', ')} req/s; ratio ${r.ratio.toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}); p50 ${r.p50} ms; non-2xx ${r.non2xx}, errors ${r.errors}; load ${load1()}`,
    );
    const ratios = restores.map((x) => x.restore / x.update);
    console.log(
      `restore vs update, ${concurrency} at a time in one process [${dialect}]: ${Math.round(median(restores.map((x) => x.restore)))} against ${Math.round(median(restores.map((x) => x.update)))} per s; ratio ${median(ratios).toFixed(2)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}); load ${load1()}`,
    );
  } finally {
    await stop(server.child);
    await tdb.drop();
  }
}

async function merges(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const pairs: [string, string][] = [];
  await write(db, async (tx) => {
    const op = operatorCtx(tx, ctx.workspaceId);
    const record = async (type: keyof typeof RECORD_TYPES, fields: Record<string, unknown>, relationships?: Record<string, unknown>) =>
      (await createRecord(op, { type: RECORD_TYPES[type], fields, ...(relationships ? { relationships } : {}) })).id;
    for (let p = 0; p < Number(args.merges); p++) {
      // Per pair 60 accounts, 60 notes and 30 lists: each contact links to 40 accounts, is named by 40
      // notes and joins 20 lists (100 links), of which 20, 20 and 10 are shared with the other.
      const accounts: string[] = [];
      for (let i = 0; i < 60; i++) accounts.push(await record('account', { $name: `Account ${p}.${i}` }));
      const pair: string[] = [];
      for (const [side, from] of [
        ['a', 0],
        ['b', 20],
      ] as const)
        pair.push(
          await record(
            'contact',
            { $name: { firstName: side, lastName: `Pair ${p}` }, $email: [`${side}.${p}@merge.test`] },
            { $account: accounts.slice(from, from + 40) },
          ),
        );
      for (let i = 0; i < 40; i++) await record('note', { $title: `Note ${p}.${i}` }, { $contact: i < 20 ? [pair[0]] : [pair[1]] });
      for (let i = 0; i < 20; i++) await record('note', { $title: `Shared ${p}.${i}` }, { $contact: pair });
      for (let i = 0; i < 30; i++) {
        const members = i < 10 ? [pair[0]!] : i < 20 ? [pair[1]!] : pair;
        await createList(op, { fields: { $name: `List ${p}.${i}`, $objectType: 'contact' }, relationships: { $contacts: members } });
      }
      pairs.push([pair[0]!, pair[1]!]);
    }
  });
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
  const sides = [{ name: 'this checkout', main: MAIN }, ...(args.before ? [{ name: 'before', main: join(resolve(args.before), 'src/cli/main.ts') }] : [])];
  const servers: { name: string; child: Awaited<ReturnType<typeof startServer>>['child']; url: string; times: number[] }[] = [];
  try {
    for (const side of sides) servers.push({ name: side.name, ...(await startServer(tdb, 1, {}, side.main)), times: [] });
    const headers = { authorization: `Bearer ${ctx.secret}`, ...VERSION, 'content-type': 'application/json' };
    const merge = async (s: (typeof servers)[number], [primaryId, duplicateId]: [string, string]) => {
      const t0 = performance.now();
      const res = await fetch(`${s.url}/v1/contacts/merge`, { method: 'POST', headers, body: JSON.stringify({ primaryId, duplicateId }) });
      const body = (await res.json()) as { summary?: { syncRepointedCount: number } };
      s.times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`merge (${s.name}): ${res.status} ${JSON.stringify(body)}`);
    };
    // A merge on each first warms its caches and connections; the CPU of the merges after it is
    // counted: the server's processes and, on PostgreSQL, the backends serving them.
    for (const [j, s] of servers.entries()) await merge(s, pairs[j]!);
    for (const s of servers) s.times.length = 0;
    const procs = (s: (typeof servers)[number]) => {
      const own = family(s.child.pid!);
      return { own, pg: dialect === 'postgres' ? backends(own) : [] };
    };
    const cpu = (ps: number[]) => ps.reduce((n, p) => n + cpuMs(p), 0);
    const before = servers.map((s) => procs(s)).map((p) => ({ own: cpu(p.own), pg: cpu(p.pg) }));
    for (let i = servers.length; i + servers.length <= pairs.length; i += servers.length) {
      const order = (i / servers.length) % 2 ? [...servers].reverse() : servers;
      for (const [j, s] of order.entries()) await merge(s, pairs[i + j]!);
    }
    const used = servers.map((s, k) => {
      const p = procs(s);
      return { own: (cpu(p.own) - before[k]!.own) / s.times.length, pg: (cpu(p.pg) - before[k]!.pg) / s.times.length };
    });
    for (const [k, s] of servers.entries()) {
      const sorted = [...s.times].sort((a, b) => a - b);
      const pg = dialect === 'postgres' ? `, PostgreSQL ${used[k]!.pg.toFixed(1)} ms` : '';
      console.log(
        `POST /v1/contacts/merge, 100 links each [${dialect}]${servers.length > 1 ? ` ${s.name}` : ''}: median ${median(s.times).toFixed(1)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(1)} ms, min ${sorted[0]!.toFixed(1)} ms over ${s.times.length}; CPU per merge: server ${used[k]!.own.toFixed(1)} ms${pg}; load ${load1()}`,
      );
    }
    if (servers.length > 1) {
      const ratios = servers[0]!.times.map((x, i) => x / servers[1]!.times[i]!);
      console.log(
        `this checkout against before, pair by pair: median ratio ${median(ratios).toFixed(2)}; ratio of medians ${(median(servers[0]!.times) / median(servers[1]!.times)).toFixed(2)}`,
      );
    }
  } finally {
    for (const s of servers) await stop(s.child);
    await tdb.drop();
  }
}

async function pages(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const n = Number(args.pages);
  const t0 = performance.now();
  const ids = await seedRankedContacts(db, ctx.workspaceId, n, Date.UTC(2026, 0, 1));
  await write(db, (tx) => rankRebuild(tx, RECORDS, [ctx.workspaceId, 'contact']));
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
  console.error(`${dialect}: seeded ${n} contacts in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const server = await startServer(tdb, 1);
  try {
    const headers = { authorization: `Bearer ${ctx.secret}`, ...VERSION };
    const measure = async (when: string, total: number) => {
      for (const [label, at] of [
        ['first', 0],
        ['25%', 0.25],
        ['50%', 0.5],
        ['75%', 0.75],
        ['last', 1],
      ] as const) {
        const offset = label === 'last' ? total - 25 : Math.floor(total * at);
        const url = `${server.url}/v1/contacts?limit=25&offset=${offset}`;
        const page = await latency(url, headers, Number(args.requests), (body) => {
          if (body.totalCount !== total || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
        });
        console.log(
          `${dialect.padEnd(8)}  ${when.padEnd(6)}  ${total.toLocaleString('en').padStart(9)} contacts  offset ${`${offset.toLocaleString('en')} (${label})`.padEnd(18)}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  load ${load1()}`,
        );
      }
    };
    await measure('before', n);
    const gone = ids.filter((_, i) => i % 10 === 5);
    const d = await requests(server.url, 'DELETE', headers, (i) => ({ path: `/v1/contacts/${gone[i]}` }), gone.length);
    if (d.non2xx + d.errors > 0) throw new Error(`deletes: ${d.non2xx} non-2xx, ${d.errors} errors`);
    console.error(`${dialect}: deleted ${gone.length} contacts through HTTP at ${Math.round(d.rps)}/s; load ${load1()}`);
    await measure('after', n - gone.length);
  } finally {
    await stop(server.child);
    await tdb.drop();
  }
}

if (!args.only || args.only === 'delete') await deletes();
if (!args.only || args.only === 'merge') await merges();
if (!args.only || args.only === 'pages') await pages();
