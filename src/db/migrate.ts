// One forward-only migration set for both dialects, compiled into the code (no directory scan),
// applied at start-up and by `rolodex migrate`.
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import type { Db } from './database.ts';
import * as m0001 from './migrations/0001_foundation.ts';
import * as m0002 from './migrations/0002_lists.ts';
import * as m0003 from './migrations/0003_messages.ts';
import * as m0004 from './migrations/0004_files.ts';

const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_lists': m0002,
  '0003_messages': m0003,
  '0004_files': m0004,
};

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => MIGRATIONS },
    // Kysely looks for its own tables by name across schemas; name the schema so that databases
    // sharing one PostgreSQL server (tests, several tenants) do not see each other's.
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((r) => r.status === 'Error');
  if (result.error || failed) {
    const cause = result.error instanceof Error ? result.error.message : String(result.error ?? '');
    throw new MigrationError(`migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
