// The lever docs/performance.md §Import weighs for PostgreSQL imports: COPY against the multi-row
// inserts an import sends (src/db/insert-rows.ts), for rows shaped as the value index's, into a
// table with its three indexes (as an import meets it on PostgreSQL, which keeps them). One
// transaction per mode and round, the same rows, chunks of 5,000: the inserts 800 rows a
// statement, prepared and sent without waiting, up to 24 in flight; COPY one statement a chunk in
// text format. Prints per mode the wall time, this process's CPU and the backend's CPU (from
// /proc, the server being local), medians over the rounds, the order alternating.
//   node bench/pg-copy.ts [--rows 300000] [--rounds 3]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { cpuMs } from './proc-cpu.ts';
import { median } from './run.ts';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '3' } } });
const ROWS = Number(args.rows);
const CHUNK = 5000;
const PER_STATEMENT = 800;
const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const sql = postgres(url, { max: 1, onnotice: () => {} });

type Row = [string, string, string, string | null, number | null, string];
const rowsFrom = (from: number, n: number): Row[] =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const num = i % 3 === 0;
    return [
      'ws_bench',
      'contact',
      ['$name', '$email', 'title'][i % 3]!,
      num ? null : `value ${(i * 7919) % 1000003}`,
      num ? i % 1000 : null,
      `con_${((i * 2654435761) % 2 ** 32).toString(36)}`,
    ];
  });

const insertText = new Map<number, string>();
function insertOf(n: number): string {
  let text = insertText.get(n);
  if (text === undefined) {
    let k = 0;
    const tuple = () => `(${Array.from({ length: 6 }, () => `$${++k}`).join(', ')})`;
    insertText.set(n, (text = `insert into bench_copy.record_values values ${Array.from({ length: n }, tuple).join(', ')}`));
  }
  return text;
}

const field = (v: string | number | null) =>
  v === null ? '\\N' : typeof v === 'number' ? String(v) : v.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);

async function run(mode: 'insert' | 'copy'): Promise<{ wall: number; cpu: number; backend: number }> {
  await sql.unsafe(`drop schema if exists bench_copy cascade; create schema bench_copy;
    create table bench_copy.record_values (workspace_id text not null, object_type text not null, field text not null,
      value_text text, value_num double precision, record_id text not null);
    create index on bench_copy.record_values (workspace_id, object_type, field, value_text, record_id);
    create index on bench_copy.record_values (workspace_id, object_type, field, value_num, record_id);
    create index on bench_copy.record_values (record_id, field);`);
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  let backend = 0;
  await sql.begin(async (tx) => {
    const pid = Number((await tx`select pg_backend_pid() as pid`)[0]!.pid);
    const backend0 = cpuMs(pid);
    let inFlight: Promise<unknown>[] = [];
    for (let from = 0; from < ROWS; from += CHUNK) {
      const rows = rowsFrom(from, Math.min(CHUNK, ROWS - from));
      if (mode === 'insert') {
        for (let i = 0; i < rows.length; i += PER_STATEMENT) {
          const part = rows.slice(i, i + PER_STATEMENT);
          inFlight.push(tx.unsafe(insertOf(part.length), part.flat(), { prepare: true }));
        }
        if (inFlight.length >= 24) {
          await Promise.all(inFlight);
          inFlight = [];
        }
      } else {
        let text = '';
        for (const r of rows) text += `${r.map(field).join('\t')}\n`;
        const stream = await tx.unsafe('copy bench_copy.record_values from stdin').writable();
        await new Promise<void>((resolve, reject) => {
          stream.on('finish', resolve);
          stream.on('error', reject);
          stream.end(text);
        });
      }
    }
    await Promise.all(inFlight);
    backend = cpuMs(pid) - backend0;
  });
  const cpu = process.cpuUsage(cpu0);
  return { wall: (performance.now() - started) / 1000, cpu: (cpu.user + cpu.system) / 1e6, backend: backend / 1000 };
}

const results = { insert: [] as Awaited<ReturnType<typeof run>>[], copy: [] as Awaited<ReturnType<typeof run>>[] };
try {
  for (let r = 0; r < Number(args.rounds); r++) {
    const order = r % 2 === 0 ? (['insert', 'copy'] as const) : (['copy', 'insert'] as const);
    for (const mode of order) results[mode].push(await run(mode));
    process.stdout.write(`round ${r + 1}: load ${loadavg()[0]!.toFixed(1)}\n`);
  }
} finally {
  await sql.unsafe('drop schema if exists bench_copy cascade');
  await sql.end();
}
for (const mode of ['insert', 'copy'] as const) {
  const m = (k: 'wall' | 'cpu' | 'backend') => median(results[mode].map((x) => x[k])).toFixed(2);
  process.stdout.write(`${ROWS} rows, ${mode.padEnd(6)} wall ${m('wall')} s, this process ${m('cpu')} s of CPU, the backend ${m('backend')} s\n`);
}
const ratio = (k: 'wall' | 'cpu' | 'backend') => (median(results.copy.map((x) => x[k])) / median(results.insert.map((x) => x[k]))).toFixed(2);
process.stdout.write(`copy / insert: wall ${ratio('wall')}, this process's CPU ${ratio('cpu')}, the backend's CPU ${ratio('backend')}\n`);
