// DATA_DIR and the signing secret kept in it (docs/config.md §Data directory). Reading the
// configuration writes nothing there: the directory is made where something is about to be
// written, and a generated secret on its first use, which only the server reaches. What is made
// there is its owner's alone, whatever the umask (docs/deploy.md §The data directory's modes).
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { makeDirectorySync } from './lib/directories.ts';
import { ConfigError, InputError } from './lib/errors.ts';

/** What `DATA_DIR/signing-secret` holds: 32 random bytes or more, as hexadecimal digits. */
const SECRET_FILE = /^(?:[0-9a-fA-F]{2}){32,}$/;

/**
 * The secret kept in `file`, or undefined when there is none. A file that cannot be read or does
 * not hold what rolodex writes (empty, cut short, edited) is refused: read as hexadecimal it gave
 * a short or empty key, with which anyone could sign upload and download addresses.
 */
export function readSigningSecretFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${file} cannot be read: ${(err as Error).message}`, 'DATA_DIR');
  }
  if (!SECRET_FILE.test(text))
    throw new ConfigError(
      `${file} does not hold a signing secret (64 or more hexadecimal digits): put back the one from a backup, or remove it to have a new one made (upload and download addresses given out before stop working)`,
      'DATA_DIR',
    );
  return Buffer.from(text, 'hex');
}

/**
 * Creates DATA_DIR and its missing parents, where something is about to be written there (the
 * server, the embedded database, a restore): reading the configuration creates nothing, so that a
 * command that refuses, or a mistyped DATA_DIR given to one that only reads, leaves no directory
 * (docs/config.md §Data directory). Each directory it makes is its owner's alone (0700): the
 * database holds webhook secrets and every workspace's data. One that exists keeps its mode.
 * Returns the outermost directory it created, if any.
 */
export function makeDataDir(dataDir: string): string | undefined {
  try {
    return makeDirectorySync(dataDir, 0o700);
  } catch (err) {
    throw new ConfigError(`DATA_DIR ${dataDir} cannot be created: ${(err as Error).message}`, 'DATA_DIR');
  }
}

/**
 * DATA_DIR as given (`./data` when unset), made absolute. It is resolved here alone, as the
 * configuration is read, so that the server and every command refuse one that is not a directory
 * before they create or read anything (docs/cli.md §A DATA_DIR that is not a directory).
 */
export function resolveDataDir(given: string | undefined): string {
  const dataDir = resolve(given || './data');
  refuseNonDirectoryDataDir(dataDir);
  return dataDir;
}

/**
 * Refuses a DATA_DIR that is something other than a directory (a file), or lies under one: every
 * path inside it then fails with ENOTDIR, which a command that reads DATA_DIR would otherwise take
 * for a missing or damaged part (a missing database, another signing-secret) and name that
 * instead, and the server or a command that writes there for a directory it cannot make. One that
 * does not exist yet passes: it is made where something is written.
 */
function refuseNonDirectoryDataDir(dataDir: string): void {
  for (let p = resolve(dataDir); ; p = dirname(p)) {
    let isDirectory: boolean | undefined;
    try {
      isDirectory = statSync(p, { throwIfNoEntry: false })?.isDirectory();
    } catch (err) {
      // ENOTDIR: something above p is not a directory; the walk up finds it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') return;
    }
    if (isDirectory === false) {
      const where = p === resolve(dataDir) ? '' : ` (${p} in its path is not one)`;
      throw new ConfigError(`DATA_DIR ${dataDir} is not a directory${where}: set DATA_DIR to a directory`, 'DATA_DIR');
    }
    // A directory, or nothing at all above p: DATA_DIR can be made.
    if (isDirectory || dirname(p) === p) return;
  }
}

/**
 * The refusal of a command that needs the embedded database, given a DATA_DIR without one (most
 * often a mistyped one): one line naming where it was looked for (docs/cli.md §What creates the
 * database).
 */
export function noDatabase(file: string): InputError {
  return new InputError(`no database at ${file}: is DATA_DIR right? (\`rolodex migrate\` creates one)`, 'DATA_DIR');
}

/**
 * The refusal of a command that needs the embedded database, given a `rolodex.db` that holds no
 * migrations (an empty file, or another program's database): one line naming it.
 */
export function emptyDatabase(file: string): InputError {
  return new InputError(`no rolodex database in ${file}: is DATA_DIR right? (\`rolodex migrate\` creates one)`, 'DATA_DIR');
}

/**
 * What a server needs of DATA_DIR before it starts: the directory and the signing secret, so that a
 * directory that cannot be made or a damaged signing-secret stops it at once with one line.
 */
export function prepareServing(config: { dataDir: string; signingSecret: () => Buffer }): void {
  makeDataDir(config.dataDir);
  config.signingSecret();
}

/**
 * The warning a server logs at start when other users of the machine may read DATA_DIR (list it,
 * or open the embedded database through it): one the operator made keeps its mode, and is told
 * how to close it (docs/deploy.md §The data directory's modes). Undefined when they may not.
 */
export function openDataDirWarning(dataDir: string): string | undefined {
  const modeOf = (p: string) => {
    try {
      return statSync(p, { throwIfNoEntry: false })?.mode;
    } catch {
      return undefined;
    }
  };
  const dirMode = modeOf(dataDir);
  if (dirMode === undefined) return undefined;
  const dbMode = modeOf(join(dataDir, 'rolodex.db'));
  const listed = (dirMode & 0o004) !== 0;
  const dbRead = (dirMode & 0o001) !== 0 && dbMode !== undefined && (dbMode & 0o004) !== 0;
  if (!listed && !dbRead) return undefined;
  const octal = (m: number) => (m & 0o777).toString(8).padStart(4, '0');
  const modes = `mode ${octal(dirMode)}${dbMode === undefined ? '' : `, rolodex.db ${octal(dbMode)}`}`;
  return `DATA_DIR ${dataDir} is readable by other users of this machine (${modes}): chmod 700 ${dataDir} keeps its database, blobs and signing secret to this user`;
}

/** The secret in `file`, made (with DATA_DIR) when there is none. */
export function keptSigningSecret(file: string, dataDir: string): Buffer {
  const kept = readSigningSecretFile(file);
  if (kept) return kept;
  makeDataDir(dataDir);
  const secret = randomBytes(32);
  // Written aside and linked into place: two processes starting at once cannot each keep a
  // different secret, and neither reads the other's file before it is whole.
  const aside = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    writeFileSync(aside, secret.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    linkSync(aside, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigError(`${file} cannot be written: ${(err as Error).message}`, 'DATA_DIR');
    return readSigningSecretFile(file) as Buffer;
  } finally {
    rmSync(aside, { force: true });
  }
}
