import { loadConfig } from '../config.ts';
import { makeDataDir } from '../data-dir.ts';
import { migrate, openDb, takeMigrationNotes } from '../db/index.ts';
import { reachDatabase } from '../runtime.ts';
import { type Io, parse, print } from './io.ts';

export const usage = `rolodex migrate [--json]`;

export async function run(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, {});
  const config = loadConfig(io.env);
  // The embedded database is made in DATA_DIR; reading the configuration made no directory.
  if (!config.databaseUrl) makeDataDir(config.dataDir);
  const db = openDb({
    dataDir: config.dataDir,
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  try {
    await reachDatabase(db, config);
    const applied = await migrate(db);
    const notes = takeMigrationNotes();
    const text = [applied.length ? `applied ${applied.join(', ')}` : 'database is up to date', ...notes.map((n) => `${n.migration}: ${n.message}`)].join('\n');
    print(io, values.json as boolean, notes.length > 0 ? { applied, notes } : { applied }, text);
  } finally {
    await db.close();
  }
}
