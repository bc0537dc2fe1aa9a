// Import at scale (issue 12): generates a realistic NDJSON file (custom field definitions, accounts,
// then contacts with a full name, 1–3 e-mails, an account and custom values) and times
// `rolodex import` end to end as a child process (process start, parse, checks and the one
// transaction), on a fresh SQLite data directory or PostgreSQL schema of its own. Prints seconds,
// rows/s and the 1-minute load average; the file is written before the clock starts.
// With --pages, GET /v1/contacts of the imported workspace is then timed through HTTP at offset 0,
// the middle and the last page, one request at a time over keep-alive (medians of --requests),
// between two measurements of the floor, GET /v1/auth/validate, on the same server.
//   node bench/import.ts [--contacts 1000000] [--dialect sqlite|postgres|both] [--node-args=--cpu-prof] [--pages] [--requests 200] [--keep] [--shared]
// With --keep, the SQLite data directory (or PostgreSQL schema) is kept and its path printed.
// On SQLite the bench closes its own connection before the import, which then has the database
// alone and writes through a rollback journal (docs/import.md §Speed); with --shared it keeps it
// open, as a running server would, and the import writes through the WAL.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { accountsFor, writeNdjson } from './import-data.ts';
import { runImport } from './import-child.ts';
import { latency, MAIN, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '1000000' },
    dialect: { type: 'string', default: 'sqlite' },
    'node-args': { type: 'string', default: '' },
    keep: { type: 'boolean', default: false },
    shared: { type: 'boolean', default: false },
    pages: { type: 'boolean', default: false },
    requests: { type: 'string', default: '200' },
  },
});
const CONTACTS = Number(args.contacts);
const ACCOUNTS = accountsFor(CONTACTS);

async function pages(dataDir: string, databaseUrl: string | undefined, secret: string): Promise<void> {
  const srv = await startServer({ dataDir, databaseUrl }, 1);
  try {
    const headers = { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' };
    const n = Number(args.requests);
    const line = (name: string, r: { median: number; p95: number }) =>
      `  ${name.padEnd(36)} median ${r.median.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   load ${(loadavg()[0] as number).toFixed(2)}\n`;
    const floor = async () => process.stdout.write(line('GET /v1/auth/validate (floor)', await latency(`${srv.url}/v1/auth/validate`, headers, n)));
    await floor();
    for (const offset of [0, Math.floor(CONTACTS / 2), CONTACTS - 25]) {
      const r = await latency(`${srv.url}/v1/contacts?offset=${offset}`, headers, n, (body: { totalCount: number; data: unknown[] }) => {
        if (body.totalCount !== CONTACTS || body.data.length !== 25)
          throw new Error(`offset ${offset}: totalCount ${body.totalCount}, ${body.data.length} rows`);
      });
      process.stdout.write(line(`GET /v1/contacts?offset=${offset}`, r));
    }
    await floor();
  } finally {
    await stop(srv.child);
  }
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const tdb = await createTestDb(dialect);
  const { db, dataDir } = tdb;
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  let keep = false;
  let open = true;
  try {
    const ws = await createWorkspace(systemCtx(db.kysely), { name: 'bench' });
    const key = await createKey(operatorCtx(db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null });
    const file = join(dataDir, 'import.ndjson');
    const w0 = performance.now();
    await writeNdjson(file, CONTACTS);
    const writeSeconds = (performance.now() - w0) / 1000;
    if (dialect === 'sqlite' && !args.shared) {
      await db.close();
      open = false;
    }
    const nodeArgs = args['node-args'].split(' ').filter((a) => a !== '');
    const load0 = loadavg()[0] as number;
    const { code, out, seconds, cpu } = await runImport(MAIN, ['--workspace', ws.id, file], { ...process.env, ...env }, { nodeArgs });
    if (code !== 0) throw new Error(`import failed (${code})`);
    const { counts, phases, journal } = JSON.parse(out) as { counts: Record<string, number>; phases: Record<string, number>; journal?: string };
    const rows = Object.values(counts).reduce((a, b) => a + b, 0);
    const fmt = (x: number) => x.toFixed(2);
    process.stdout.write(
      [
        `== ${dialect}: import of ${CONTACTS} contacts, ${ACCOUNTS} accounts, 5 field definitions (file written in ${fmt(writeSeconds)} s)`,
        `  rolodex import (end to end)  ${fmt(seconds)} s   ${Math.round(rows / seconds)} objects/s   (goal on SQLite: ≤ 60 s for 1,000,000)`,
        `  CPU of the import            ${fmt(cpu)} s (user + system, from /proc; read every 0.25 s)`,
        `  its steps (s)                ${Object.entries(phases)
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', ')}`,
        `  counts                       ${JSON.stringify(counts)}${journal ? `, written through ${journal === 'wal' ? 'the WAL' : 'a rollback journal'}` : ''}`,
        `  load average (1 min)         ${fmt(load0)} before, ${fmt(loadavg()[0] as number)} after`,
        '',
      ].join('\n'),
    );
    if (args.pages) await pages(dataDir, env.DATABASE_URL, key.secret);
    if (args.keep) {
      keep = true;
      process.stdout.write(`  kept: --data ${dialect === 'postgres' ? `postgres:${tdb.schema}` : dataDir} --workspace ${ws.id} --key ${key.secret}\n`);
    }
  } finally {
    if (open) await (keep ? db.close() : tdb.drop());
    else if (!keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as 'sqlite' | 'postgres']) await run(dialect);
