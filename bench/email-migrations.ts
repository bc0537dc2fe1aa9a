// The upgrade's passes over every record with an e-mail address: migrations 0078_email_keys
// (writes the value index again of the records whose addresses give other rows) and
// 0079_email_characters (reads every address, rewrites none on data that holds no invisible
// character). 0079 is not run beside the release before it (docs/deploy.md §Migrations), so its
// time is time without a server. The bench imports --contacts contacts (bench/import-data.ts: 1–3
// e-mails each) into a fresh database, then runs each migration's `up` again on it, --rounds
// times, and prints the medians as ratios to the floor of any such pass measured in the same
// rounds: every contact's fields read and parsed, 500 at a time along the same index.
//   node bench/email-migrations.ts [--contacts 200000] [--dialect sqlite|postgres|both] [--rounds 3]
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { openDb, type Db } from '../src/db/index.ts';
import { takeMigrationNotes } from '../src/db/migration-notes.ts';
import * as m0078 from '../src/db/migrations/0078_email_keys.ts';
import * as m0079 from '../src/db/migrations/0079_email_characters.ts';
import { RUN_BESIDE_TABLE } from '../src/db/run-beside.ts';
import { systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { writeNdjson } from './import-data.ts';
import { runImport } from './import-child.ts';
import { MAIN } from './run.ts';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '200000' },
    dialect: { type: 'string', default: 'both' },
    rounds: { type: 'string', default: '3' },
  },
});
const CONTACTS = Number(args.contacts);
const ROUNDS = Number(args.rounds);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The floor of a pass: every contact's fields read and parsed, 500 at a time along the listing index. */
async function floor(db: Kysely<any>): Promise<void> {
  for (let after = { created_at: '', id: '' }; ;) {
    const rows: { id: string; created_at: string; fields: string }[] = await db
      .selectFrom('records')
      .select(['id', 'created_at', 'fields'])
      .where('kind', '=', 'contact')
      .where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)))
      .orderBy('created_at')
      .orderBy('id')
      .limit(500)
      .execute();
    if (rows.length === 0) return;
    for (const r of rows) JSON.parse(r.fields);
    after = rows.at(-1)!;
  }
}

const PASSES = [
  ['the floor', floor],
  ['0078_email_keys', m0078.up],
  ['0079_email_characters', m0079.up],
] as const;

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const tdb = await createTestDb(dialect);
  const { dataDir } = tdb;
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  let db: Db | undefined;
  try {
    const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'bench' });
    const file = join(dataDir, 'import.ndjson');
    await writeNdjson(file, CONTACTS);
    const load0 = loadavg()[0] as number;
    // The import has a SQLite database alone, as a bulk load would.
    if (dialect === 'sqlite') await tdb.db.close();
    const imported = await runImport(MAIN, ['--workspace', ws.id, file], { ...process.env, ...env }, { nodeArgs: [] });
    if (imported.code !== 0) throw new Error(`import failed (${imported.code})`);
    db = dialect === 'sqlite' ? openDb({ dataDir, sqliteFile: join(dataDir, 'rolodex.db') }) : tdb.db;
    const k = db.kysely as Kysely<any>;
    const times = new Map<string, number[]>(PASSES.map(([name]) => [name, []]));
    for (let r = 0; r < ROUNDS; r++)
      for (const [name, up] of PASSES) {
        // up() notes that 0078 may run beside the release before; the note is made again each time.
        await k.deleteFrom(RUN_BESIDE_TABLE).where('name', '=', name).execute();
        const t0 = performance.now();
        await up(k);
        times.get(name)!.push((performance.now() - t0) / 1000);
        takeMigrationNotes();
      }
    const base = median(times.get('the floor')!);
    const lines = [`== ${dialect}: ${CONTACTS} contacts (1–3 e-mails each), ${ROUNDS} rounds; import ${imported.seconds.toFixed(1)} s`];
    for (const [name, xs] of times) {
      const all = xs.map((x) => x.toFixed(2)).join(', ');
      lines.push(`  ${name.padEnd(24)} median ${median(xs).toFixed(2)} s (${all})  ${(median(xs) / base).toFixed(2)} of the floor`);
    }
    lines.push(`  load average (1 min)     ${load0.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`, '');
    process.stdout.write(lines.join('\n'));
  } finally {
    if (dialect === 'sqlite') {
      await db?.close();
      rmSync(dataDir, { recursive: true, force: true });
    } else await tdb.drop();
  }
}

for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as 'sqlite' | 'postgres']) await run(dialect);
