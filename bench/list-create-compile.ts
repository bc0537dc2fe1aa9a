// The CPU of building a list create's two writes (its row; its event and the event's deliveries),
// in process and without a database: built and compiled by Kysely at every call, as they were, or
// compiled once and only bound (src/db/prepared.ts, docs/performance.md §Writes compiled once).
// Medians of 7 runs of 20,000 creates' statements each.
//   node bench/list-create-compile.ts [postgres|sqlite]
import {
  type Compilable,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { bindOnce } from '../src/db/prepared.ts';
import type { Database, Executor } from '../src/db/types.ts';
import { queueFrom } from '../src/webhooks/repository.ts';
import { median } from './run.ts';

const pg = process.argv[2] !== 'sqlite';
const db = new Kysely<Database>({
  dialect: pg
    ? {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (d) => new PostgresIntrospector(d),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      }
    : {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (d) => new SqliteIntrospector(d),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
});
const at = '2026-12-03T00:00:00.000Z';
const list = {
  id: 'lst_01',
  workspace_id: 'ws_01',
  external_id: null,
  name: 'Bench',
  object_type: 'account' as const,
  member_count: 0,
  created_at: at,
  updated_at: at,
};
const event = {
  id: 'evt_01',
  workspace_id: 'ws_01',
  type: 'list.created',
  object_id: 'lst_01',
  occurred_at: at,
  body: JSON.stringify({ object: 'x'.repeat(500) }),
};

/** The statements of a create, as portable.ts's deferredInsertThen makes them (one on PostgreSQL). */
function statements(d: Executor, l: typeof list, e: typeof event): Compilable[] {
  const insert = d.insertInto('events').values(e);
  const events = pg
    ? [{ compile: () => sql`with inserted as (${insert.returningAll()}) ${queueFrom(d, sql`inserted`, sql`e.id = ${e.id}`)}`.compile(d) }]
    : [insert, { compile: () => queueFrom(d, sql.table('events'), sql`e.id = ${e.id}`).compile(d) }];
  return [d.insertInto('lists').values(l), ...events];
}

const bound = bindOnce(
  (d: Executor, id: string, ws: string, name: string, evt: string, type: string, body: string) =>
    statements(d, { ...list, id, workspace_id: ws, name }, { ...event, id: evt, workspace_id: ws, type, object_id: id, body }),
  6,
);
let sink = 0;
const perCall = () => statements(db, list, event).forEach((q) => (sink += q.compile().sql.length));
const once = () => bound(db, [list.id, list.workspace_id, list.name, event.id, event.type, event.body]).forEach((q) => (sink += q.compile().sql.length));

function cpuPerCall(fn: () => void, n: number): number {
  for (let i = 0; i < 2000; i++) fn();
  const from = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(from);
  return (used.user + used.system) / n;
}

const runs = { perCall: [] as number[], once: [] as number[] };
for (let k = 0; k < 7; k++) {
  runs.perCall.push(cpuPerCall(perCall, 20_000));
  runs.once.push(cpuPerCall(once, 20_000));
}
if (sink === 0) throw new Error('nothing compiled');
console.log(`${pg ? 'PostgreSQL' : 'SQLite'}: ${median(runs.perCall).toFixed(1)} µs a create built per call, ${median(runs.once).toFixed(1)} µs compiled once`);
