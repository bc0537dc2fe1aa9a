// Page latency at any offset (docs/pages.md): GET /v1/contacts at 0, 25%, 50%, 75% and the last
// page of all the seeded contacts (the ranked set of records), then contact lists of 10,000, 100,000 and 1,000,000
// members, built through the list repository 1,000 members per transaction as the API adds them,
// then GET /v1/lists/{id}/contacts against a server process, one request at a time over
// keep-alive: at offsets 0, 25,000, 50,000, 75,000 and 99,975 of the 100,000-member list, and at
// 10%, 50%, 90% and the last page of every list. Each figure is the median of its requests, next
// to the median of the bare Fastify baseline (bench/baseline.ts) measured right before it with the
// same client, and their ratio: the machine's drift moves both; and the 1-minute load average.
// Before and after the pages, GET /v1/auth/validate on the same server: the cost of any request. Last, GET /v1/messages with a
// workspace key (public and restricted channels: the shared part of the ranked set) at 0, 25%,
// 50%, 75% and the last page of --messages messages in 30 channels of every visibility.
//   node bench/pages.ts [--dialect sqlite|postgres|both] [--sizes 10000,100000,1000000] [--messages 150000] [--requests 200] [--explain]
// With --type tasks it measures the task listing instead, with and without filters (bench/task-pages.ts):
//   node bench/pages.ts --type tasks [--dialect sqlite|postgres|both] [--tasks 1000000] [--requests 200] [--rounds 5] [--task-filters ranked|all] [--task-statuses spread|bunched]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CompiledQuery, sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { pagePostgres } from '../src/db/rank/sql.ts';
import { rankRebuild, partitionKey } from '../src/db/rank/index.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';

import { LIST_MEMBERS } from '../src/lists/repository.ts';
import { RECORDS } from '../src/records/repository.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { latency, start, startBaseline, startServer, stop } from './run.ts';
import { seedMemberList, seedRankedContacts, seedMessages } from './seeds.ts';
import { taskPages } from './task-pages.ts';
import { createUser } from '../src/users/service.ts';
import { write } from '../src/db/write.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    sizes: { type: 'string', default: '10000,100000,1000000' },
    requests: { type: 'string', default: '200' },
    messages: { type: 'string', default: '150000' },
    explain: { type: 'boolean', default: false },
    type: { type: 'string', default: 'contacts' },
    tasks: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
    'task-filters': { type: 'string', default: 'ranked' },
    'task-statuses': { type: 'string', default: 'spread' },
  },
});
const SIZES = args.sizes.split(',').map(Number);
const REQUESTS = Number(args.requests);
const T0 = Date.UTC(2026, 0, 1);

async function run(dialect: DialectName): Promise<void> {
  const t0 = performance.now();
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const children: Awaited<ReturnType<typeof start>>[] = [];
  try {
    const ws = await createWorkspace(systemCtx(db), { name: 'Bench pages' });
    const key = await createKey(operatorCtx(db, ws.id), { userId: null, scopes: null, expiresInMs: null });
    const contacts = await seedRankedContacts(db, ws.id, Math.max(...SIZES), T0);
    // The rows went in directly, so the contact listing's ranked set is built once (docs/pages.md).
    await write(db, (tx) => rankRebuild(tx, RECORDS, [ws.id, 'contact']));
    const lists = new Map<number, string>();
    for (const n of SIZES) lists.set(n, await seedMemberList(db, ws.id, contacts, n, T0));
    const user = await createUser(operatorCtx(db, ws.id), { email: 'pages@bench.test', role: 'admin' });
    const MESSAGES = Number(args.messages);
    if (MESSAGES > 0) await seedMessages({ db: tdb.db, workspaceId: ws.id, userId: user.id, secret: key.secret, state: {} }, MESSAGES);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.error(`${dialect}: seeded ${SIZES.join(', ')}-member lists in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    const server = await startServer(tdb, 1);
    children.push(server.child);
    const baseline = await startBaseline();
    children.push(baseline.child);
    const auth = { authorization: `Bearer ${key.secret}`, 'service-version': '2026-03-01' };
    // The floor: the cheapest authenticated route of the same server, measured the same way. What a
    // page costs above it is the page's own work; the rest is the request itself on this machine.
    const floor = async (when: string) => {
      const f = await latency(`${server.url}/v1/auth/validate`, auth, REQUESTS);
      console.log(
        `${dialect.padEnd(8)}  floor (${when}): GET /v1/auth/validate  median ${f.median.toFixed(2)} ms  p95 ${f.p95.toFixed(2)} ms  load ${loadavg()[0]!.toFixed(1)}`,
      );
    };
    await floor('before');

    const measure = async (n: number, offset: number, label: string) => {
      const base = await latency(baseline.url, {}, REQUESTS);
      const url = `${server.url}/v1/lists/${lists.get(n)}/contacts?limit=25&offset=${offset}`;
      const page = await latency(url, auth, REQUESTS, (body) => {
        if (body.totalCount !== n || body.data.length !== Math.min(25, n - offset))
          throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
      });
      const cells = [dialect.padEnd(8), n.toLocaleString('en').padStart(9), `${offset.toLocaleString('en')} (${label})`.padEnd(20)];
      console.log(
        `${cells.join('  ')}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  baseline ${base.median.toFixed(2)} ms  ×${(page.median / base.median).toFixed(1)}  load ${loadavg()[0]!.toFixed(1)}`,
      );
    };
    // GET /v1/contacts: the record listing through the ranked set of records.
    const total = Math.max(...SIZES);
    for (const [label, offset] of [
      ['first', 0],
      ['25%', total / 4],
      ['50%', total / 2],
      ['75%', (total * 3) / 4],
      ['last', total - 25],
    ] as const) {
      const base = await latency(baseline.url, {}, REQUESTS);
      const url = `${server.url}/v1/contacts?limit=25&offset=${Math.floor(offset)}`;
      const page = await latency(url, auth, REQUESTS, (body) => {
        if (body.totalCount !== total || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
      });
      const cells = [dialect.padEnd(8), 'contacts', total.toLocaleString('en').padStart(9), `${Math.floor(offset).toLocaleString('en')} (${label})`.padEnd(20)];
      console.log(
        `${cells.join('  ')}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  baseline ${base.median.toFixed(2)} ms  ×${(page.median / base.median).toFixed(1)}  load ${loadavg()[0]!.toFixed(1)}`,
      );
    }
    if (lists.has(100_000))
      for (const [label, offset] of [
        ['first', 0],
        ['25%', 25_000],
        ['50%', 50_000],
        ['75%', 75_000],
        ['last', 99_975],
      ] as const)
        await measure(100_000, offset, label);
    for (const n of SIZES) {
      for (const [label, offset] of [
        ['10%', n / 10],
        ['50%', n / 2],
        ['90%', (n * 9) / 10],
        ['last', n - 25],
      ] as const)
        await measure(n, Math.floor(offset), label);
    }

    // GET /v1/messages with the workspace key: the shared part of the messages' ranked set.
    const first =
      Number(args.messages) > 0 ? ((await (await fetch(`${server.url}/v1/messages?limit=1`, { headers: auth })).json()) as { totalCount: number }) : null;
    if (first) {
      const shared = first.totalCount;
      for (const [label, offset] of [
        ['first', 0],
        ['25%', Math.floor(shared / 4)],
        ['50%', Math.floor(shared / 2)],
        ['75%', Math.floor((shared * 3) / 4)],
        ['last', shared - 25],
      ] as const) {
        const base = await latency(baseline.url, {}, REQUESTS);
        const url = `${server.url}/v1/messages?limit=25&offset=${offset}`;
        const page = await latency(url, auth, REQUESTS, (body) => {
          if (body.totalCount !== shared || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
        });
        const cells = [dialect.padEnd(8), 'messages', shared.toLocaleString('en').padStart(9), `${offset.toLocaleString('en')} (${label})`.padEnd(20)];
        console.log(
          `${cells.join('  ')}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  baseline ${base.median.toFixed(2)} ms  ×${(page.median / base.median).toFixed(1)}  load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
    }

    await floor('after');

    if (args.explain && dialect === 'postgres') {
      const n = Math.max(...SIZES);
      const list = lists.get(n) as string;
      const stmt = pagePostgres(LIST_MEMBERS, false, 25);
      const values: Record<string, unknown> = { scope: partitionKey(LIST_MEMBERS, [list]), k: n / 2, limit: 25, by0: list };
      const params = stmt.args.map((a) => values[a]);
      const plan = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain (analyze, buffers) ${stmt.sql}`, params));
      console.log(
        `\nPostgreSQL plan of the member page at offset ${(n / 2).toLocaleString('en')} of ${n.toLocaleString('en')}:\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`,
      );
    }
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}

console.log(`${REQUESTS} requests per figure (median, p95), one at a time over keep-alive; baseline = bare Fastify, same client`);
if (args.type !== 'contacts' && args.type !== 'tasks') throw new Error(`--type: contacts or tasks, not ${args.type}`);
if (args['task-statuses'] !== 'spread' && args['task-statuses'] !== 'bunched')
  throw new Error(`--task-statuses: spread or bunched, not ${args['task-statuses']}`);
for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName])
  await (args.type === 'tasks'
    ? taskPages(dialect, Number(args.tasks), REQUESTS, {
        rounds: Number(args.rounds),
        all: args['task-filters'] === 'all',
        bunched: args['task-statuses'] === 'bunched',
      })
    : run(dialect));
