// Opening what the server and the CLI share: the database (migrated) and the blob store. What only
// a server uses (src/server-deps.ts) is not loaded here, so that a command holds in memory only
// what it uses (docs/import.md §Memory). Nothing here runs at import time.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { emptyDatabase, makeDataDir, noDatabase } from './data-dir.ts';
import { migrate, openDb, ping, refreshStatistics, schemaHeld, storageRefusal, takeMigrationNotes, type Db } from './db/index.ts';
import { InputError } from './lib/errors.ts';
import { createBlobStore } from './blobs/index.ts';
import type { BlobStore } from './blobs/blob-store.ts';

/**
 * The database, migrated. With `statementTimeoutMs` (the server's, on PostgreSQL) the migrations
 * run first on a connection without it, since building an index may take longer. `create: false`
 * refuses an embedded database that does not exist yet or holds no migrations, or a PostgreSQL
 * schema that holds none, instead of making it.
 */
export async function openDatabase(
  config: Config,
  logger?: Logger,
  opts: { writerThread?: boolean; statementTimeoutMs?: number; create?: boolean } = {},
): Promise<Db> {
  const { statementTimeoutMs, create = true, ...rest } = opts;
  const limited = Boolean(statementTimeoutMs && config.databaseUrl);
  // Whether the read-only look has already found the embedded file migrated.
  let looked = false;
  if (!config.databaseUrl) {
    const file = join(config.dataDir, 'rolodex.db');
    // A command that works on what a database holds, given a DATA_DIR without one (most often a
    // mistyped one), is refused and creates nothing: an empty database made there would answer
    // as if the workspace were empty (docs/cli.md §What creates the database).
    if (!create && !existsSync(file)) throw noDatabase(file);
    if (!create) looked = await lookBeforeOpening(config);
    // The embedded database lives in DATA_DIR, made here rather than when the configuration is read.
    makeDataDir(config.dataDir);
  }
  const connectTimeoutMs = config.databaseConnectTimeoutMs;
  const db = openDb({ dataDir: config.dataDir, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}), connectTimeoutMs, ...rest });
  try {
    await reachDatabase(db, config);
    if (!create && !looked) await refuseUnmigrated(db, config);
    const applied = await migrate(db);
    if (applied.length > 0) logger?.info({ applied }, 'migrations applied');
    // What data migrations changed, and what they had to keep as it was (src/db/migration-notes.ts).
    for (const note of takeMigrationNotes()) logger?.info({ migration: note.migration, ...note.counts }, note.message);
    await refreshStatistics(db);
  } catch (err) {
    await db.close();
    // A database that cannot be written stops the start in one line naming why, not a stack.
    const refusal = storageRefusal(err);
    if (refusal) {
      const where = config.databaseUrl ? '' : ` in ${config.dataDir}`;
      throw new InputError(`cannot write the database${where}: ${refusal}`, config.databaseUrl ? 'DATABASE_URL' : 'DATA_DIR');
    }
    throw err;
  }
  if (!limited) return db;
  await db.close();
  return openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl!, statementTimeoutMs: statementTimeoutMs!, connectTimeoutMs });
}

/**
 * SQLite's rule for a missing file (docs/cli.md §What creates the database), for one that holds no
 * migrations (a `touch`ed file, another program's database), before anything opens it to write:
 * the look is read-only, so that the refused file stays as it was (setting WAL writes its header).
 * Returns whether it looked: a file it cannot read (a hot journal, which only a writing connection
 * puts back, docs/import.md §Speed) is looked at again once opened. `rolodex backup` looks too,
 * as it copies the file.
 */
export async function lookBeforeOpening(config: Config): Promise<boolean> {
  const look = openDb({ dataDir: config.dataDir, readOnly: true });
  try {
    await refuseUnmigrated(look, config);
    return true;
  } catch (err) {
    if (err instanceof InputError) throw err;
    return false;
  } finally {
    await look.close();
  }
}

/**
 * A database that holds no migrations, before the migrator would create and fill it: on SQLite a
 * file that is empty or another program's; on PostgreSQL a schema that does not exist or holds
 * none, most often one mistyped in DATABASE_URL. Refused with one line naming it.
 */
async function refuseUnmigrated(db: Db, config: Config): Promise<void> {
  const held = await schemaHeld(db);
  if (held.migrated) return;
  if (!config.databaseUrl) throw emptyDatabase(join(config.dataDir, 'rolodex.db'));
  const schema = `schema "${held.schema ?? ''}"`;
  const found = held.exists ? `no rolodex database in ${schema} of` : `no ${schema} in`;
  throw new InputError(
    `${found} the PostgreSQL database at ${postgresAt(config.databaseUrl)}: is DATABASE_URL right? (\`rolodex migrate\` creates ${held.exists ? 'one' : 'it'})`,
    'DATABASE_URL',
  );
}

/** Where DATABASE_URL points, as refusals name it: host, port and database, never the password. */
function postgresAt(databaseUrl: string): string {
  const u = new URL(databaseUrl);
  return `${u.searchParams.get('host') ?? u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name cannot be resolved now',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOENT: 'no such socket',
};

/**
 * A trivial query before anything else, so that a database that cannot be reached, or refuses
 * the credentials, is reported in plain words naming where it was looked for (never the password).
 */
export async function reachDatabase(db: Db, config: Config): Promise<void> {
  try {
    await ping(db);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (!config.databaseUrl) {
      // Storage that refuses writes (a read-only DATA_DIR, where the -wal and -shm files cannot be
      // made) is said in the words of what to mend, as openDatabase says it of a later write.
      const refusal = storageRefusal(err);
      if (refusal) throw new InputError(`cannot write the database in ${config.dataDir}: ${refusal}`, 'DATA_DIR');
      throw new InputError(`cannot open the SQLite database in ${config.dataDir}: ${e.message ?? String(err)}`, 'DATA_DIR');
    }
    const where = postgresAt(config.databaseUrl);
    // postgres.js's own timeout is the bound this process set: named, since it is an operator's to change.
    const reason =
      e.code === 'CONNECT_TIMEOUT'
        ? `no answer within ${config.databaseConnectTimeoutMs / 1000} s, DATABASE_CONNECT_TIMEOUT_MS`
        : ((e.code && REASONS[e.code]) ?? e.message ?? String(err));
    throw new InputError(`cannot reach the PostgreSQL database at ${where} (${reason}): is it running, and is DATABASE_URL right?`, 'DATABASE_URL');
  }
}

/** S3 when configured, else local disk under DATA_DIR/blobs. */
export function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3) {
    // Uploads are spooled in DATA_DIR on their way to the bucket.
    makeDataDir(config.dataDir);
    return createBlobStore({ kind: 's3', ...config.s3, spoolDir: config.dataDir });
  }
  return createBlobStore({ kind: 'disk', dir: join(config.dataDir, 'blobs') });
}
