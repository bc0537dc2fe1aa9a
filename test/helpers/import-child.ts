// An import in a process of its own, for test/api/import-alone.test.ts to kill: the writer thread and
// journal of `rolodex import` (src/cli/import.ts), with a page cache small enough that the
// transaction spills pages into the database file long before it commits.
//   node test/helpers/import-child.ts DATA_DIR WORKSPACE_ID FILE
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { openDb } from '../../src/db/database.ts';
import { takeDatabaseAlone } from '../../src/db/bulk-load.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';

const [dataDir, workspaceId, file] = process.argv.slice(2) as [string, string, string];
const db = openDb({ dataDir, writerThread: true });
await sql`pragma cache_size = -256`.execute(db.kysely);
const alone = await takeDatabaseAlone(db.kysely);
process.stdout.write(`${alone.journal}\n`);
try {
  await runImport(operatorCtx(db.kysely, workspaceId), { kinds: importKinds(), text: readFileSync(file, 'utf8') });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await alone.restore();
  await db.close();
}
