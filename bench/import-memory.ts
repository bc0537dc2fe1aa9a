// Peak resident memory and time of `rolodex import` (docs/import.md §Memory), NDJSON and CSV of
// the same contacts, each into a database of its own that holds only the definitions and
// accounts (an import into a database an earlier import grew would not be a bulk load, and would
// measure that rather than the format). The import runs as a child process; its peak resident set
// (VmHWM) and CPU time (every thread's, to the last 50 ms) are read from /proc (Linux) while it
// runs. Prints, per format, seconds, CPU seconds, contacts/s and the peak in MiB, then CSV's rate
// as a share of NDJSON's, measured in the same run: with --rounds N, N pairs, every other pair
// importing CSV first, and the median of the pairs' ratios, with the load average after each pair.
//   node bench/import-memory.ts [--contacts 100000] [--dialect sqlite|postgres] [--rounds 1]
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { runImport } from './import-child.ts';
import { MAIN, median } from './run.ts';

const { values: args } = parseArgs({
  options: { contacts: { type: 'string', default: '100000' }, dialect: { type: 'string', default: 'sqlite' }, rounds: { type: 'string', default: '1' } },
});
const CONTACTS = Number(args.contacts);
const ACCOUNTS = Math.max(1, Math.floor(CONTACTS / 50));
const TITLES = ['CEO', 'CTO', 'Engineer', 'Sales lead', 'Designer'];

async function write(path: string, lines: () => Generator<string>): Promise<void> {
  const out = createWriteStream(path);
  for (const l of lines()) if (!out.write(`${l}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

function* setup(): Generator<string> {
  yield JSON.stringify({
    object: 'definition',
    externalId: 'd-title',
    definition: 'field',
    objectType: 'contact',
    key: 'title',
    label: 'Title',
    valueType: 'TEXT',
  });
  yield JSON.stringify({
    object: 'definition',
    externalId: 'd-score',
    definition: 'field',
    objectType: 'contact',
    key: 'score',
    label: 'Score',
    valueType: 'NUMBER',
  });
  for (let a = 0; a < ACCOUNTS; a++)
    yield JSON.stringify({ object: 'account', externalId: `a${a}`, fields: { $name: { value: `Company ${a}`, valueType: 'TEXT' } } });
}

const contact = (i: number) => ({
  first: `Ann${i % 97}`,
  last: `Lee${i}`,
  emails: [`ann.${i}@acme.test`, ...(i % 2 ? [`lee.${i}@globex.test`] : [])],
  title: TITLES[i % TITLES.length] as string,
  score: i % 1000,
  account: `a${i % ACCOUNTS}`,
});

function* ndjson(): Generator<string> {
  for (let i = 0; i < CONTACTS; i++) {
    const c = contact(i);
    yield JSON.stringify({
      object: 'contact',
      externalId: `c${i}`,
      fields: {
        $name: { value: { firstName: c.first, lastName: c.last }, valueType: 'FULL_NAME' },
        $email: { value: c.emails, valueType: 'EMAIL' },
        title: { value: c.title, valueType: 'TEXT' },
        score: { value: c.score, valueType: 'NUMBER' },
      },
      relationships: { $account: { values: [c.account] } },
    });
  }
}

function* csv(): Generator<string> {
  yield 'externalId,$name.firstName,$name.lastName,Email,Title,Score,Accounts';
  for (let i = 0; i < CONTACTS; i++) {
    const c = contact(i);
    yield `c${i},${c.first},${c.last},${c.emails.join(';')},${c.title},${c.score},${c.account}`;
  }
}

/** Runs `rolodex import`; returns its seconds, CPU seconds and peak resident memory in MiB. */
async function rolodexImport(env: Record<string, string>, args: string[]): Promise<{ seconds: number; cpu: number; peakMiB: number; out: string }> {
  const run = await runImport(MAIN, args, { ...process.env, ...env }, { everyMs: 50 });
  if (run.code !== 0) throw new Error(`rolodex import exited ${run.code}: ${run.out}`);
  return run;
}

const dialect = args.dialect === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A database of its own for one import, holding the definitions and accounts: every import is a
 * bulk load into a database that only the setup wrote (docs/import.md §Speed), whatever ran
 * before it, so that the two formats are measured alike.
 */
async function freshDatabase(): Promise<{ env: Record<string, string>; ws: string; drop: () => Promise<void> }> {
  const tdb = await createTestDb(dialect);
  const env: Record<string, string> = { DATA_DIR: tdb.dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  const ws = (await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Import' })).id;
  const drop = async () => {
    if (dialect === 'sqlite') rmSync(tdb.dataDir, { recursive: true, force: true });
    else await tdb.drop?.();
  };
  if (dialect === 'sqlite') await tdb.db.close();
  await rolodexImport(env, ['--workspace', ws, files.setup]);
  return { env, ws, drop };
}

/** Imports `file` (with `extra` arguments) into a fresh database, which is dropped after. */
async function measure(file: string, extra: string[]): Promise<Awaited<ReturnType<typeof rolodexImport>>> {
  const db = await freshDatabase();
  try {
    return await rolodexImport(db.env, ['--workspace', db.ws, ...extra, file]);
  } finally {
    await db.drop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rolodex-import-memory-'));
const files = { setup: join(dir, 'setup.ndjson'), ndjson: join(dir, 'contacts.ndjson'), csv: join(dir, 'contacts.csv') };
try {
  await write(files.setup, setup);
  await write(files.ndjson, ndjson);
  await write(files.csv, csv);
  const mib = (f: string) => (statSync(f).size / 2 ** 20).toFixed(1);
  process.stdout.write(`${CONTACTS} contacts on ${dialect}; files: NDJSON ${mib(files.ndjson)} MiB, CSV ${mib(files.csv)} MiB\n`);
  const ratios: number[] = [];
  for (let r = 0; r < Number(args.rounds); r++) {
    const runN = () => measure(files.ndjson, []);
    const runC = () => measure(files.csv, ['--type', 'contact']);
    let n: Awaited<ReturnType<typeof runN>>, c: Awaited<ReturnType<typeof runC>>;
    if (r % 2 === 0) {
      n = await runN();
      c = await runC();
    } else {
      c = await runC();
      n = await runN();
    }
    for (const [name, res] of [
      ['NDJSON', n],
      ['CSV', c],
    ] as const) {
      const commit = (JSON.parse(res.out) as { commit: string }).commit;
      process.stdout.write(
        `  ${name.padEnd(7)} ${res.seconds.toFixed(1)} s  CPU ${res.cpu.toFixed(1)} s  ${Math.round(CONTACTS / res.seconds)} contacts/s  peak RSS ${res.peakMiB.toFixed(0)} MiB  (${commit})\n`,
      );
    }
    ratios.push(n.seconds / c.seconds);
    process.stdout.write(
      `  round ${r + 1} (${r % 2 === 0 ? 'NDJSON' : 'CSV'} first): CSV rate / NDJSON rate ${(n.seconds / c.seconds).toFixed(2)}, load ${loadavg()[0]!.toFixed(1)}\n`,
    );
  }
  process.stdout.write(`CSV rate / NDJSON rate: median ${median(ratios).toFixed(2)} of ${ratios.map((x) => x.toFixed(2)).join(', ')}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
