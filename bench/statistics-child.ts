// Child of bench/statistics-sharing.ts: refreshes the statistics of DATA_DIR's SQLite database with
// the code of checkout DIR, through a writer thread as `rolodex import` does, and prints its seconds.
//   node bench/statistics-child.ts DIR DATA_DIR
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, dataDir] = process.argv.slice(2) as [string, string];
const { openDb } = (await import(pathToFileURL(join(dir, 'src/db/database.ts')).href)) as typeof import('../src/db/database.ts');
const { refreshStatistics } = (await import(pathToFileURL(join(dir, 'src/db/statistics.ts')).href)) as typeof import('../src/db/statistics.ts');
const db = openDb({ dataDir, writerThread: true });
const t = performance.now();
await refreshStatistics(db, { bulk: true });
process.stdout.write(String((performance.now() - t) / 1000));
await db.close();
