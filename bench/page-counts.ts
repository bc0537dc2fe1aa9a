// How a page's work grows with the size of its set and with the offset, counted rather than timed
// (docs/pages.md, docs/performance.md §Pages at any offset): a count does not move with the load of
// the machine, a time does. For contact listings and member lists of each size, at the first page,
// 10%, 50%, 90% and the last page, the statements of the ranked page (the rank part of
// GET /v1/contacts and GET /v1/lists/{id}/contacts; fetching the page's 25 rows by id is the same
// work at every offset) are run and counted, and for GET /v1/messages with a workspace key (the
// shared part of a set with parts) the page's statements with its rows:
// - PostgreSQL: shared buffers touched (hit + read) by `explain (analyze, buffers)` of the page's
//   one statement, its second run (the first may read the catalogue);
// - SQLite: the virtual-machine steps and page-cache hits of each of the page's statements, run
//   by the `sqlite3` shell's `.stats` against the same file, summed (Debian package sqlite3).
//   node bench/page-counts.ts [--dialect sqlite|postgres|both] [--sizes 10000,100000,1000000]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { CompiledQuery, sql } from 'kysely';
import type { DialectName, Executor } from '../src/db/types.ts';
import { partedPostgres, partedSqlite } from '../src/db/rank/parted.ts';
import { pagePostgres, pageSqlite, type Stmt } from '../src/db/rank/sql.ts';
import { type PartedRead, type RankDef, rankRebuild, partitionKey } from '../src/db/rank/index.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { LIST_MEMBERS } from '../src/lists/repository.ts';
import { MESSAGES, messageReader } from '../src/messages/repository.ts';
import { createUser } from '../src/users/service.ts';
import { RECORDS } from '../src/records/repository.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { seedMemberList, seedMessages, seedRankedContacts } from './seeds.ts';
import { write } from '../src/db/write.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    sizes: { type: 'string', default: '10000,100000,1000000' },
  },
});
const SIZES = args.sizes.split(',').map(Number);
const T0 = Date.UTC(2026, 0, 1);
const LIMIT = 25;

type Values = Record<string, unknown>;
const bind = (stmt: Stmt, values: Values) => stmt.args.map((a) => values[a]);

async function postgresCount(db: Executor, def: RankDef, values: Values, read?: PartedRead): Promise<string> {
  const stmt = read ? partedPostgres(def, read, LIMIT) : pagePostgres(def, false, LIMIT);
  const explain = CompiledQuery.raw(`explain (analyze, buffers, format json) ${stmt.sql}`, bind(stmt, values));
  await db.executeQuery(explain);
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': unknown }>(explain);
  const raw = rows[0]!['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: Record<string, number> }];
  const top = plan[0].Plan;
  return `${top['Shared Hit Blocks']! + top['Shared Read Blocks']!} buffers`;
}

/** A value as the `sqlite3` shell's `.parameter set` reads it: an SQL literal. */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  throw new Error(`page-counts: no literal for ${typeof v}`);
}

async function sqliteCount(db: Executor, file: string, def: RankDef, values: Values, read?: PartedRead): Promise<string> {
  const script: string[] = ['.stats on'];
  const steps = read ? partedSqlite(def, read, values) : pageSqlite(def, values, false);
  let step = steps.next();
  while (!step.done) {
    const { stmt, args: stepArgs } = step.value;
    const params = bind(stmt, stepArgs);
    script.push('.parameter clear', ...params.map((p, i) => `.parameter set ?${i + 1} ${literal(p)}`), `${stmt.sql.replace(/\s+/g, ' ')};`);
    step = steps.next((await db.executeQuery<Values>(CompiledQuery.raw(stmt.sql, params))).rows);
  }
  const out = execFileSync('sqlite3', [file], { input: script.join('\n'), encoding: 'utf8' });
  const sum = (label: string) => [...out.matchAll(new RegExp(`${label}:\\s+(\\d+)`, 'g'))].reduce((s, m) => s + Number(m[1]), 0);
  const each = [...out.matchAll(/Virtual Machine Steps:\s+(\d+)/g)].map((m) => m[1]).join(' + ');
  return `${sum('Virtual Machine Steps')} VM steps (${each}), ${sum('Page cache hits')} page-cache hits, ${script.filter((l) => l.endsWith(';')).length} statements`;
}

async function run(dialect: DialectName): Promise<void> {
  const t0 = performance.now();
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  try {
    // One workspace per size for the contact listing (its scope is the workspace's contacts); the
    // member lists are of the largest workspace's contacts.
    const sets: { label: string; def: RankDef; by: string[]; n: number; read?: PartedRead }[] = [];
    let largest: { ws: string; contacts: string[] } | undefined;
    for (const n of SIZES) {
      const ws = await createWorkspace(systemCtx(db), { name: `Counts ${n}` });
      const contacts = await seedRankedContacts(db, ws.id, n, T0);
      await write(db, (tx) => rankRebuild(tx, RECORDS, [ws.id, 'contact']));
      sets.push({ label: 'contacts', def: RECORDS, by: [ws.id, 'contact'], n });
      if (n === Math.max(...SIZES)) largest = { ws: ws.id, contacts };
    }
    for (const n of SIZES) sets.push({ label: 'members', def: LIST_MEMBERS, by: [await seedMemberList(db, largest!.ws, largest!.contacts, n, T0)], n });
    // Messages in 30 channels, a third of them private: a workspace key sees the other two thirds.
    for (const n of SIZES) {
      const ws = await createWorkspace(systemCtx(db), { name: `Messages ${n}` });
      const user = await createUser(operatorCtx(db, ws.id), { email: `counts${n}@bench.test`, role: 'admin' });
      await seedMessages({ db: tdb.db, workspaceId: ws.id, userId: user.id, secret: '', state: {} }, n);
      const seen = Array.from({ length: n }, (_, i) => i % 3 !== 2).filter(Boolean).length;
      sets.push({ label: 'messages', def: MESSAGES, by: [ws.id], n: seen, read: messageReader({ workspaceId: ws.id, userId: null }) });
    }
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.error(`${dialect}: seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    for (const set of sets)
      for (const [label, k] of [
        ['first', 0],
        ['10%', set.n / 10],
        ['50%', set.n / 2],
        ['90%', (set.n * 9) / 10],
        ['last', set.n - LIMIT],
      ] as const) {
        const values: Values = { ...set.read?.args, scope: partitionKey(set.def, set.by), k: Math.floor(k), limit: LIMIT };
        set.by.forEach((v, i) => (values[`by${i}`] = v));
        const count =
          dialect === 'postgres' ? await postgresCount(db, set.def, values, set.read) : await sqliteCount(db, tdb.sqliteFile!, set.def, values, set.read);
        console.log(`${dialect.padEnd(8)}  ${set.label.padEnd(8)}  ${set.n.toLocaleString('en').padStart(9)}  ${label.padEnd(5)}  ${count}`);
      }
  } finally {
    await tdb.drop();
  }
}

for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await run(dialect);
