// What `rolodex restore` refuses in DATA_DIR before it writes anything (docs/deploy.md §Backups):
// a database or its log, another program's file, another signing secret.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readSigningSecretFile } from '../data-dir.ts';
import { InputError } from '../lib/errors.ts';

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * Refuses a DATA_DIR whose `rolodex.db` holds anything: a database (with its log beside it, what
 * it holds cannot be told without applying the log), another program's tables, a file SQLite
 * cannot read. One that holds nothing, a 0-byte file or a SQLite database without a table, is
 * replaced as a missing one is made: nothing is lost (docs/cli.md §What creates the database).
 */
export async function refuseHeldDatabase(dataDir: string): Promise<void> {
  const database = join(dataDir, 'rolodex.db');
  const there = await exists(database);
  const held = (what: string) => new InputError(`${dataDir} already holds ${what}: restore into an empty DATA_DIR, with the server stopped`, 'DATA_DIR');
  // A restore ended by SIGKILL (or a power cut) before it named the database: its parts are here
  // and no database is; restoring over them would mix two restores.
  if (await exists(join(dataDir, 'rolodex.db.restoring')))
    throw new InputError(
      `${dataDir} holds rolodex.db.restoring, left by a restore that did not finish: remove it and what that restore wrote (blobs/, signing-secret), then restore again`,
      'DATA_DIR',
    );
  // The log of a database removed without it (after a crash, its last commits): SQLite would
  // apply its pages to the restored file at its first opening, and damage it.
  for (const log of ['rolodex.db-wal', 'rolodex.db-journal'])
    if (await exists(join(dataDir, log))) {
      if (there) throw held(`a database (rolodex.db and its log ${log})`);
      throw new InputError(
        `${dataDir} holds ${log}, left by a database that is no longer there, which SQLite would apply to the restored one: restore into an empty DATA_DIR`,
        'DATA_DIR',
      );
    }
  if (!there) return;
  const { sqliteFileHeld } = await import('../db/index.ts');
  const found = sqliteFileHeld(database);
  const keep = 'restore into an empty DATA_DIR, or move the file away if it is not needed';
  if ('fault' in found) throw new InputError(`${database} is not an empty SQLite database (${found.fault}): ${keep}`, 'DATA_DIR');
  if (found.rolodex) throw held('a database');
  if (found.names.length > 0) {
    const named = found.names.slice(0, 5).join(', ') + (found.names.length > 5 ? ', …' : '');
    throw new InputError(`${database} holds another program's tables (${named}), which a restore would overwrite: ${keep}`, 'DATA_DIR');
  }
}

/**
 * Refuses a DATA_DIR holding a signing secret other than the backup's (a damaged one included), on
 * either database: put in its place, it would stop every upload and download address signed with
 * it, those of a server running on that DATA_DIR too. The same secret is no loss, and is accepted.
 */
export function refuseOtherSecret(dir: string, dataDir: string): void {
  const kept = join(dataDir, 'signing-secret');
  const other = () =>
    new InputError(`${kept} is not the backup's signing-secret, which would replace it: restore into an empty DATA_DIR, with the server stopped`, 'DATA_DIR');
  let held: Buffer | undefined;
  try {
    held = readSigningSecretFile(kept);
  } catch {
    throw other();
  }
  // checkParts has read the backup's: it is whole.
  if (held && !held.equals(readSigningSecretFile(join(dir, 'signing-secret')) as Buffer)) throw other();
}
