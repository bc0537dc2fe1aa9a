// One purge for bench/purge.ts, with the modules of the checkout `argv[2]` (a directory) on the
// database its environment names (DATA_DIR, DATABASE_URL), as `rolodex trash purge` runs it: one
// write of the named ids of workspace `argv[3]`. Prints the purge's milliseconds, without the
// process's start or the database's opening, and its counts, as JSON.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, workspaceId, ...ids] = process.argv.slice(2) as [string, string, ...string[]];
const src = (path: string) => import(pathToFileURL(join(resolve(dir), 'src', path)).href);
const { loadConfig } = await src('config.ts');
const { openDatabase } = await src('runtime.ts');
const { write } = await src('db/index.ts');
const { operatorCtx } = await src('lib/context.ts');
// Before the purge had a module of its own, it lived beside the restore.
const { purge } = await src(existsSync(join(resolve(dir), 'src/trash/purge.ts')) ? 'trash/purge.ts' : 'trash/restore.ts');
const db = await openDatabase(loadConfig(process.env), undefined, { create: false });
const t0 = performance.now();
const counts = await write(db.kysely, (tx: unknown) => purge(operatorCtx(tx, workspaceId), { ids }));
const ms = performance.now() - t0;
await db.close();
console.log(JSON.stringify({ ms, counts }));
