// `rolodex backup DIR` and `rolodex restore DIR` (docs/deploy.md §Backups). A backup is a
// directory: `rolodex.db` (SQLite's online backup: a consistent snapshot taken while the server
// keeps serving), `blobs/` (the local blob store, copied after the snapshot, so every file row of
// the snapshot has its bytes), `signing-secret` when DATA_DIR holds one, and `backup.json`
// describing it. On PostgreSQL the database is backed up by pg_dump; the command says how and
// copies the local blobs, if any.
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { InputError } from '../lib/errors.ts';
import { type Io, parse, UsageError } from './io.ts';
import { version } from './version.ts';
import { makeDirectory } from '../lib/directories.ts';

export const usage = `rolodex backup DIR [--json]    (a consistent copy of DATA_DIR's database and blobs, while the server runs)`;

const MANIFEST = 'backup.json';

interface Manifest {
  format: 1;
  version: string;
  createdAt: string;
  database: 'sqlite' | 'postgres';
  files: string[];
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Copies the blob directory, leaving out uploads still being written (`.name.uuid.tmp`). */
async function copyBlobs(from: string, to: string): Promise<boolean> {
  if (!(await exists(from))) return false;
  await cp(from, to, { recursive: true, errorOnExist: true, force: false, filter: (src) => !/\/\.[^/]+\.tmp$/.test(src) });
  return true;
}

function pgGuidance(config: Config, action: 'backup' | 'restore'): string {
  const blobs = config.s3 ? `Blobs are in the S3 bucket "${config.s3.bucket}": use the store's versioning or replication.` : '';
  return action === 'backup'
    ? `The database is PostgreSQL: back it up with its own tools, e.g.\n  pg_dump --format=custom --file=rolodex-$(date +%F).pgdump "$DATABASE_URL"\n(or continuous archiving for point-in-time recovery). ${blobs}`.trim()
    : `The database is PostgreSQL: restore it with its own tools into an empty database, e.g.\n  pg_restore --no-owner --dbname="$DATABASE_URL" rolodex-YYYY-MM-DD.pgdump\nthen run \`rolodex migrate\`. ${blobs}`.trim();
}

export async function runBackup(dir: string, config: Config): Promise<{ manifest: Manifest; notes: string[] }> {
  try {
    if ((await exists(dir)) && (await readdir(dir)).length > 0) throw new InputError(`${dir} is not empty: back up into a new directory`, 'DIR');
    await makeDirectory(dir, 0o700);
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot write ${dir}: ${(err as Error).message}`, 'DIR');
  }
  const files: string[] = [];
  const notes: string[] = [];
  if (config.databaseUrl) notes.push(pgGuidance(config, 'backup'));
  else {
    const source = join(config.dataDir, 'rolodex.db');
    if (!(await exists(source))) throw new InputError(`no database in ${config.dataDir} (DATA_DIR)`, 'DATA_DIR');
    // Loaded here: the database layer is large, and a backup of PostgreSQL needs none of it.
    const { copySqliteDatabase } = await import('../db/index.ts');
    await copySqliteDatabase(source, join(dir, 'rolodex.db'));
    files.push('rolodex.db');
  }
  if (!config.s3 && (await copyBlobs(join(config.dataDir, 'blobs'), join(dir, 'blobs')))) files.push('blobs/');
  if (await exists(join(config.dataDir, 'signing-secret'))) {
    await cp(join(config.dataDir, 'signing-secret'), join(dir, 'signing-secret'));
    files.push('signing-secret');
  }
  const manifest: Manifest = {
    format: 1,
    version: version(),
    createdAt: new Date().toISOString(),
    database: config.databaseUrl ? 'postgres' : 'sqlite',
    files,
  };
  await writeFile(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return { manifest, notes };
}

export async function runRestore(dir: string, config: Config): Promise<{ manifest: Manifest; notes: string[] }> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    throw new InputError(`${dir} is not a backup made by \`rolodex backup\` (no ${MANIFEST})`, 'DIR');
  }
  const notes: string[] = [];
  if (manifest.database === 'sqlite') {
    if (config.databaseUrl)
      throw new InputError('this backup holds an embedded (SQLite) database, but DATABASE_URL is set: unset it to restore', 'DATABASE_URL');
    if (await exists(join(config.dataDir, 'rolodex.db'))) {
      throw new InputError(`${config.dataDir} already holds a database: restore into an empty DATA_DIR, with the server stopped`, 'DATA_DIR');
    }
    await cp(join(dir, 'rolodex.db'), join(config.dataDir, 'rolodex.db'), { errorOnExist: true, force: false });
  } else notes.push(pgGuidance(config, 'restore'));
  if (manifest.files.includes('blobs/')) {
    if (await exists(join(config.dataDir, 'blobs'))) {
      if ((await readdir(join(config.dataDir, 'blobs'))).length > 0)
        throw new InputError(`${config.dataDir}/blobs is not empty: restore into an empty DATA_DIR`, 'DATA_DIR');
    }
    await cp(join(dir, 'blobs'), join(config.dataDir, 'blobs'), { recursive: true });
  }
  // The secret the backup's upload and download addresses were signed with replaces the one
  // loading the configuration may have just generated.
  if (manifest.files.includes('signing-secret')) await cp(join(dir, 'signing-secret'), join(config.dataDir, 'signing-secret'));
  return { manifest, notes };
}

function target(args: string[], io: Io): { dir: string; json: boolean; config: Config } {
  const { values, positionals } = parse(args, {}, Infinity);
  if (positionals.length !== 1) throw new UsageError('give one directory');
  return { dir: resolve(positionals[0]!), json: values.json === true, config: loadConfig(io.env) };
}

export async function run(args: string[], io: Io): Promise<void> {
  const { dir, json, config } = target(args, io);
  const { manifest, notes } = await runBackup(dir, config);
  io.out(json ? JSON.stringify({ dir, ...manifest, notes }) : [`backed up ${manifest.files.join(', ') || 'nothing'} into ${dir}`, ...notes].join('\n'));
}

export const restore = {
  usage: `rolodex restore DIR [--json]   (a backup into an empty DATA_DIR, the server stopped)`,
  async run(args: string[], io: Io): Promise<void> {
    const { dir, json, config } = target(args, io);
    const { manifest, notes } = await runRestore(dir, config);
    io.out(
      json
        ? JSON.stringify({ dir, ...manifest, notes })
        : [`restored ${manifest.files.join(', ') || 'nothing'} from ${dir} into ${config.dataDir}`, ...notes].join('\n'),
    );
  },
};
