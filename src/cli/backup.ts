// `rolodex backup DIR` and `rolodex restore DIR` (docs/deploy.md §Backups). A backup is a
// directory: `rolodex.db` (SQLite's online backup: a consistent snapshot taken while the server
// keeps serving), `blobs/` (the local blob store, copied after the snapshot, so every file row of
// the snapshot has its bytes), `signing-secret` when DATA_DIR holds one, and `backup.json`
// describing it. On PostgreSQL the database is backed up by pg_dump; the command says how and
// copies the local blobs, if any.
import { constants, type Dirent, readdirSync } from 'node:fs';
import { copyFile, cp, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { makeDataDir, noDatabase, readSigningSecretFile } from '../data-dir.ts';
import { InputError } from '../lib/errors.ts';
import { type Io, parse, UsageError } from './io.ts';
import { bucketNote, pgGuidance } from './backup-postgres.ts';
import { version } from './version.ts';
import { keepToOwner, makeDirectory } from '../lib/directories.ts';
import { undoneIfInterrupted } from './interrupt.ts';
import { refuseHeldDatabase, refuseOtherSecret } from './restore-target.ts';

export const usage = `rolodex backup DIR [--json]    (a consistent copy of DATA_DIR's database and blobs, while the server runs)`;

const MANIFEST = 'backup.json';

interface Manifest {
  format: 1;
  version: string;
  createdAt: string;
  database: 'sqlite' | 'postgres';
  files: string[];
  /** Where the blobs were when they were in a bucket, not in the backup. */
  s3?: { bucket: string; prefix: string };
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The names in the directory `dir`; none when it cannot be read. */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const gone = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Copies the blob directory, leaving out uploads still being written (`.name.uuid.tmp`). The
 * server keeps deleting blobs no row points to any more (docs/files.md): one deleted between the
 * listing and its copy is left out, where it failed the whole backup. Returns how many were.
 */
async function copyBlobs(from: string, to: string): Promise<number> {
  await makeDirectory(to, 0o700);
  let left = 0;
  let entries: Dirent[];
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (err) {
    if (gone(err)) return 0;
    throw err;
  }
  for (const entry of entries) {
    if (/^\..+\.tmp$/.test(entry.name)) continue;
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) left += await copyBlobs(source, target);
    // The store writes regular files alone: a FIFO (whose reading waits for a writer that may
    // never come), a socket or a device is no blob, and is left out.
    else if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) continue;
    else await copyFile(source, target, constants.COPYFILE_EXCL).catch((err: unknown) => (gone(err) ? void left++ : Promise.reject(err as Error)));
  }
  return left;
}

/** `path` with the symbolic links of the part of it that exists resolved. */
async function real(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(await real(parent), basename(path));
  }
}

/**
 * Refuses a backup directory inside the blob directory it copies: the copy met its own copy at
 * every level, and went down until the path was too long for the file system.
 */
async function refuseInsideBlobs(dir: string, config: Config): Promise<void> {
  if (config.s3) return;
  const [blobs, target] = [await real(join(config.dataDir, 'blobs')), await real(dir)];
  if (target === blobs || target.startsWith(blobs + sep))
    throw new InputError(`${dir} is inside ${join(config.dataDir, 'blobs')}, which the backup copies: back up into a directory outside it`, 'DIR');
}

export async function runBackup(dir: string, config: Config): Promise<{ manifest: Manifest; notes: string[] }> {
  // A DATA_DIR without a database (most often a mistyped one) is refused before anything is made,
  // in the words of every command that needs one (docs/cli.md §What creates the database). One
  // that is a file was refused as such where the configuration was read (src/data-dir.ts).
  const source = join(config.dataDir, 'rolodex.db');
  if (!config.databaseUrl && !(await exists(source))) throw noDatabase(source);
  // And one that holds no migrations (an empty file), which a backup would pass off as the database.
  if (!config.databaseUrl) await (await import('../runtime.ts')).lookBeforeOpening(config);
  let existed: boolean;
  let made: string | undefined;
  try {
    await refuseInsideBlobs(dir, config);
    const place = await stat(dir).catch(() => undefined);
    existed = place !== undefined;
    if (place && !place.isDirectory()) throw new InputError(`${dir} is not a directory: back up into a new directory`, 'DIR');
    if (existed && (await readdir(dir)).length > 0) throw new InputError(`${dir} is not empty: back up into a new directory`, 'DIR');
    made = await makeDirectory(dir, 0o700);
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot write ${dir}: ${(err as Error).message}`, 'DIR');
  }
  // A backup cut short (a full disk, a blob that cannot be read, a signal) is no backup: what it
  // wrote goes, so that no directory without a manifest is left to pass for one, and the reason is
  // one line. That includes the parents it made for the directory.
  const written = () => (existed ? entries(dir).map((name) => join(dir, name)) : [made ?? dir]);
  const undo = { command: 'backup', line: (signal: string) => `interrupted by ${signal}; nothing was kept in ${dir}`, written };
  try {
    return await undoneIfInterrupted(undo, () => backUp(dir, config));
  } catch (err) {
    await Promise.all(written().map((path) => rm(path, { recursive: true, force: true })));
    if (err instanceof InputError) throw err;
    throw new InputError(`the backup failed: ${(err as Error).message}; nothing was kept in ${dir}`, 'DIR');
  }
}

async function backUp(dir: string, config: Config): Promise<{ manifest: Manifest; notes: string[] }> {
  const files: string[] = [];
  const notes: string[] = [];
  if (config.databaseUrl) notes.push(pgGuidance(config, 'backup', (await import('../db/index.ts')).schemaInUrl(config.databaseUrl)));
  else {
    // The backup then holds no blob: saying nothing let it pass for a backup of everything.
    if (config.s3) notes.push(bucketNote(config));
    // runBackup has checked that it exists.
    const source = join(config.dataDir, 'rolodex.db');
    // Loaded here: the database layer is large, and a backup of PostgreSQL needs none of it.
    const { copySqliteDatabase } = await import('../db/index.ts');
    await copySqliteDatabase(source, join(dir, 'rolodex.db'));
    files.push('rolodex.db');
  }
  if (!config.s3 && (await exists(join(config.dataDir, 'blobs')))) {
    const left = await copyBlobs(join(config.dataDir, 'blobs'), join(dir, 'blobs'));
    files.push('blobs/');
    if (left > 0) notes.push(`${left} blob${left === 1 ? ' was' : 's were'} deleted by the server while the backup ran, and left out.`);
  }
  if (await exists(join(config.dataDir, 'signing-secret'))) {
    await writeFile(join(dir, 'signing-secret'), await readFile(join(config.dataDir, 'signing-secret')), { mode: 0o600, flag: 'wx' });
    files.push('signing-secret');
  }
  const manifest: Manifest = {
    format: 1,
    version: version(),
    createdAt: new Date().toISOString(),
    database: config.databaseUrl ? 'postgres' : 'sqlite',
    files,
    ...(config.s3 ? { s3: { bucket: config.s3.bucket, prefix: config.s3.prefix } } : {}),
  };
  await writeFile(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  return { manifest, notes };
}

/** The backup's manifest: anything but one that `rolodex backup` writes is refused. */
async function readManifest(dir: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST), 'utf8');
  } catch (err) {
    // A DIR mistyped, or a file, is said as such: "no backup.json" sent the operator looking
    // inside a directory that is not there.
    const place = await stat(dir).catch((e: NodeJS.ErrnoException) => e);
    if (place instanceof Error)
      throw new InputError(place.code === 'ENOENT' || place.code === 'ENOTDIR' ? `${dir} does not exist` : `cannot read ${dir}: ${place.message}`, 'DIR');
    if (!place.isDirectory()) throw new InputError(`${dir} is not a directory`, 'DIR');
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new InputError(`cannot read ${join(dir, MANIFEST)}: ${(err as Error).message}`, 'DIR');
    throw new InputError(`${dir} is not a backup made by \`rolodex backup\` (no ${MANIFEST})`, 'DIR');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // There is one, cut short or written by something else: saying there is none sent the
    // operator looking for a file that is there.
    throw new InputError(`${dir} is not a backup made by \`rolodex backup\` (${MANIFEST} is not its manifest)`, 'DIR');
  }
  const m = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<Manifest>;
  if (
    typeof m.format !== 'number' ||
    (m.database !== 'sqlite' && m.database !== 'postgres') ||
    !Array.isArray(m.files) ||
    !m.files.every((f) => typeof f === 'string') ||
    (m.s3 !== undefined && (typeof m.s3?.bucket !== 'string' || typeof m.s3.prefix !== 'string'))
  )
    throw new InputError(`${dir} is not a backup made by \`rolodex backup\` (${MANIFEST} is not its manifest)`, 'DIR');
  if (m.format !== 1)
    throw new InputError(
      `${dir} is a backup of format ${m.format as number}${typeof m.version === 'string' ? ` (rolodex ${m.version})` : ''}; rolodex ${version()} restores format 1`,
      'DIR',
    );
  return m as Manifest;
}

const isDirectory = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/**
 * Refuses a backup that lacks a part its manifest lists, whose rolodex.db holds another program's
 * tables (restored, it would leave a DATA_DIR that every command refuses as no rolodex database),
 * or whose signing secret is damaged. A database SQLite cannot read whole is found on its copy.
 */
async function checkParts(dir: string, manifest: Manifest): Promise<void> {
  const damaged = (why: string) => new InputError(`the backup in ${dir} is damaged: ${why}`, 'DIR');
  if (manifest.database === 'sqlite' && !manifest.files.includes('rolodex.db')) throw damaged('its manifest lists no rolodex.db');
  for (const file of manifest.files) {
    const path = join(dir, file);
    if (file === 'blobs/' ? !(await isDirectory(path)) : !(await exists(path))) throw damaged(`${file} is missing`);
  }
  if (manifest.database === 'sqlite') {
    // Read without writing: the backup stays as it was.
    const { sqliteFileHeld } = await import('../db/index.ts');
    const found = sqliteFileHeld(join(dir, 'rolodex.db'));
    if ('names' in found && found.names.length > 0 && !found.rolodex) {
      const named = found.names.slice(0, 5).join(', ') + (found.names.length > 5 ? ', …' : '');
      throw damaged(`rolodex.db is no rolodex database: it holds another program's tables (${named})`);
    }
  }
  if (manifest.files.includes('signing-secret')) {
    try {
      readSigningSecretFile(join(dir, 'signing-secret'));
    } catch {
      throw damaged('signing-secret does not hold a signing secret');
    }
  }
}

/**
 * What the restored server will not find where it looks for blobs: the backup's bucket when this
 * configuration names another or none (the files would have no bytes), or the backup's blobs
 * restored into DATA_DIR when this configuration reads a bucket.
 */
function blobsNote(manifest: Manifest, config: Config): string | undefined {
  const kept = manifest.s3;
  if (kept && (config.s3?.bucket !== kept.bucket || config.s3.prefix !== kept.prefix)) {
    // Kept under no prefix, where this configuration names one: that is what to unset.
    const unprefixed = !kept.prefix && Boolean(config.s3?.prefix);
    const at = `S3_BUCKET=${kept.bucket}${kept.prefix ? ` S3_PREFIX=${kept.prefix}` : unprefixed ? ', S3_PREFIX unset' : ''}`;
    const where = kept.prefix ? ` under "${kept.prefix}"` : unprefixed ? ', under no prefix' : '';
    return `The backup's blobs are not in it but in the S3 bucket "${kept.bucket}"${where}: start the server with ${at} and that store's settings, or its files have no bytes.`;
  }
  if (!kept && config.s3 && manifest.files.includes('blobs/'))
    return `The backup's blobs are restored into ${join(config.dataDir, 'blobs')}, but S3_BUCKET is set and the server reads the bucket "${config.s3.bucket}": copy them into it, or unset S3_BUCKET.`;
  return undefined;
}

/**
 * Checks the whole backup and DATA_DIR before it writes anything, then copies the database last,
 * under a name of its own until it is checked: a refused or failed restore leaves DATA_DIR as it
 * was, and can be run again.
 */
export async function runRestore(dir: string, config: Config): Promise<{ manifest: Manifest; notes: string[] }> {
  const manifest = await readManifest(dir);
  await checkParts(dir, manifest);
  const notes: string[] = [];
  const blobs = join(config.dataDir, 'blobs');
  if (manifest.database === 'sqlite') {
    if (config.databaseUrl)
      throw new InputError('this backup holds an embedded (SQLite) database, but DATABASE_URL is set: unset it to restore', 'DATABASE_URL');
    await refuseHeldDatabase(config.dataDir);
  } else {
    // Restored without DATABASE_URL, the blobs and secret would go beside no database, and the
    // server would start on a new empty embedded one: refused, as the opposite is.
    if (!config.databaseUrl)
      throw new InputError(
        'this backup is of a PostgreSQL database, but DATABASE_URL is not set: set it to the database the restored server uses',
        'DATABASE_URL',
      );
    notes.push(pgGuidance(config, 'restore'));
  }
  if (manifest.files.includes('blobs/') && (await exists(blobs)) && (await readdir(blobs)).length > 0)
    throw new InputError(`${config.dataDir}/blobs is not empty: restore into an empty DATA_DIR`, 'DATA_DIR');
  if (manifest.files.includes('signing-secret')) refuseOtherSecret(dir, config.dataDir);

  const written: string[] = [];
  const undo = {
    command: 'restore',
    line: (signal: string) => `interrupted by ${signal}; nothing was restored into ${config.dataDir}`,
    written: () => written,
  };
  try {
    await undoneIfInterrupted(undo, () => restoreParts(dir, config, manifest, written));
  } catch (err) {
    await Promise.all(written.map((path) => rm(path, { recursive: true, force: true })));
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot restore into ${config.dataDir}: ${(err as Error).message}; nothing was restored`, 'DATA_DIR');
  }
  const elsewhere = blobsNote(manifest, config);
  if (elsewhere) notes.push(elsewhere);
  return { manifest, notes };
}

/**
 * Copies the backup's parts into DATA_DIR, naming in `written` each path before it writes there;
 * the database last, under a name of its own until it is checked. Once it has its name the restore
 * is whole, and `written` is emptied: an interruption then removes nothing.
 */
async function restoreParts(dir: string, config: Config, manifest: Manifest, written: string[]): Promise<void> {
  const [database, blobs] = [join(config.dataDir, 'rolodex.db'), join(config.dataDir, 'blobs')];
  const copy = `${database}.restoring`;
  // DATA_DIR is made only now, once everything is checked: a refused restore leaves none.
  const made = makeDataDir(config.dataDir);
  if (made) written.push(made);
  if (manifest.database === 'sqlite') {
    written.push(copy);
    await cp(join(dir, 'rolodex.db'), copy, { force: true });
    // What is restored is its owner's alone, whatever the modes the backup's files came with
    // (docs/deploy.md §The data directory's modes).
    await keepToOwner(copy);
    const { sqliteDatabaseFault } = await import('../db/index.ts');
    const fault = sqliteDatabaseFault(copy);
    if (fault) throw new InputError(`the backup in ${dir} is damaged: rolodex.db is not a whole database (${fault})`, 'DIR');
  }
  if (manifest.files.includes('blobs/')) {
    written.push(blobs);
    await cp(join(dir, 'blobs'), blobs, { recursive: true });
    await keepToOwner(blobs);
  }
  // The secret the backup's upload and download addresses were signed with; a restore never
  // makes one of its own (docs/deploy.md §Backups).
  if (manifest.files.includes('signing-secret')) {
    const secret = join(config.dataDir, 'signing-secret');
    // One already there is the backup's own (refuseOtherSecret): a failure leaves it.
    if (!(await exists(secret))) written.push(secret);
    await cp(join(dir, 'signing-secret'), secret);
    await keepToOwner(secret);
  }
  if (manifest.database === 'sqlite') await rename(copy, database);
  written.length = 0;
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
